// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/journal"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// startupExit is how muster-edge ended when it could not start.
type startupExit struct {
	code   int
	stderr string
}

// runUntilExit runs muster-edge with args and env and waits for it to stop by itself.
func runUntilExit(t *testing.T, env []string, args ...string) startupExit {
	t.Helper()
	// long enough for a loaded machine; a start that waits forever fails here
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.edge, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr := &testkit.LogBuffer{}
	cmd.Stderr = stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("muster-edge %v did not stop within 90s; its stderr:\n%s", args, stderr.Tail(4<<10))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run muster-edge: %v", err)
	}
	return startupExit{code: cmd.ProcessState.ExitCode(), stderr: stderr.String()}
}

// clientConfig writes a Choria client configuration for a broker at hostPort, with certificate,
// key and CA files holding what is given.
func clientConfig(t *testing.T, hostPort, pemFiles string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"cert.pem", "key.pem", "ca.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(pemFiles), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "client.conf")
	body := fmt.Sprintf(`identity = edge-eu-1.example.net
plugin.choria.use_srv = false
plugin.choria.middleware_hosts = %s
plugin.security.provider = file
plugin.security.file.certificate = %s
plugin.security.file.key = %s
plugin.security.file.ca = %s
`, hostPort, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "ca.pem"))
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// edgeFile writes an edge configuration for choria_config, TLS to the broker on unless insecure.
func edgeFile(t *testing.T, choriaConfig string, insecure bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edge.yaml")
	body := fmt.Sprintf("site: eu\nhelper: %s --broker nats://127.0.0.1:4222\nchoria_config: %s\nchoria_insecure: %v\n", bins.helper, choriaConfig, insecure)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBinary_StartupFailuresEndWithTheErrorAndItsRemedy: whatever stops muster-edge from
// starting, it says what and what to do about it on stderr and exits 1, never with a panic.
func TestBinary_StartupFailuresEndWithTheErrorAndItsRemedy(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{})
	edgeName := l.Info().Regions[region].Clients[0].Identity
	file, err := edgefile.Write(l, region, bins.helper)
	if err != nil {
		t.Fatal(err)
	}
	// cluster mode against a lab whose broker answers: the journal is opened at start
	cluster := func(stateDir string) []string {
		return []string{"run", "--config", file, "--coordinators", "http://127.0.0.1:1", "--state-dir", stateDir}
	}
	token := []string{"MUSTER_EDGE_COORDINATOR_TOKEN=edge-token-0123"}

	for _, tc := range []struct {
		name   string
		start  func(t *testing.T) startupExit
		says   string // in the error
		remedy string // in the remedy
	}{
		{
			name: "journal locked by another process",
			start: func(t *testing.T) startupExit {
				dir := t.TempDir()
				j, _, err := journal.Open(filepath.Join(dir, "journal-"+edgeName), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
				return runUntilExit(t, token, cluster(dir)...)
			},
			says:   "is locked",
			remedy: "edge_name",
		},
		{
			name: "corrupt journal",
			start: func(t *testing.T) startupExit {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "journal-"+edgeName), []byte("{\"op\":\"begin\",\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				return runUntilExit(t, token, cluster(dir)...)
			},
			says:   "line 1",
			remedy: "move",
		},
		{
			name: "broker unreachable",
			start: func(t *testing.T) startupExit {
				cfg := edgeFile(t, clientConfig(t, fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)), ""), true)
				return runUntilExit(t, []string{"MUSTER_EDGE_BROKER_CONNECT_TIMEOUT=2s"}, "run", "--config", cfg)
			},
			says:   "broker",
			remedy: "middleware_hosts",
		},
		{
			name: "bad client identity",
			start: func(t *testing.T) startupExit {
				cfg := edgeFile(t, clientConfig(t, l.Info().Regions[region].BrokerURL, "not a certificate\n"), false)
				return runUntilExit(t, nil, "run", "--config", cfg)
			},
			says:   "certificate",
			remedy: "certificate",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.start(t)
			if strings.Contains(got.stderr, "panic:") || strings.Contains(got.stderr, "goroutine ") {
				t.Fatalf("muster-edge panicked (exit %d):\n%s", got.code, got.stderr)
			}
			if got.code != 1 {
				t.Errorf("exit %d, want 1", got.code)
			}
			errLine, remedy := "", ""
			for _, line := range strings.Split(got.stderr, "\n") {
				if r, ok := strings.CutPrefix(line, "muster-edge: remedy: "); ok {
					remedy = r
				} else if e, ok := strings.CutPrefix(line, "muster-edge: "); ok {
					errLine = e
				}
			}
			t.Logf("error: %s\nremedy: %s", errLine, remedy)
			if !strings.Contains(errLine, tc.says) {
				t.Errorf("error line %q does not say %q", errLine, tc.says)
			}
			if !strings.Contains(remedy, tc.remedy) {
				t.Errorf("remedy %q does not mention %q", remedy, tc.remedy)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", got.stderr)
			}
		})
	}
}

// TestBinary_WarnsAtStartOfAPauseTokenOnAnOpenMonitor: a pause token with the monitor on every
// interface (monitor_bind unset) is logged as a warning naming pause_token before anything else
// starts; the monitor serves plain HTTP, so that token would cross the network readable. The
// broker here is unreachable, so the edge stops before its monitor listens anywhere.
func TestBinary_WarnsAtStartOfAPauseTokenOnAnOpenMonitor(t *testing.T) {
	t.Parallel()
	cfg := edgeFile(t, clientConfig(t, fmt.Sprintf("127.0.0.1:%d", testkit.FreePort(t)), ""), true)
	env := []string{"MUSTER_EDGE_BROKER_CONNECT_TIMEOUT=1s", "MUSTER_EDGE_PAUSE_TOKEN=pause-secret-0123456789"}
	exit := runUntilExit(t, env, "run", "--config", cfg, "--monitor-port", fmt.Sprint(testkit.FreePort(t)))
	var warning string
	for _, line := range strings.Split(exit.stderr, "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "pause_token: set while the monitor") {
			warning = line
		}
	}
	if warning == "" || !strings.Contains(warning, "plain text") {
		t.Fatalf("no warning of the pause token on every interface at start; stderr:\n%s", exit.stderr)
	}
	if strings.Contains(exit.stderr, "pause-secret-0123456789") {
		t.Errorf("the pause token reached the log:\n%s", exit.stderr)
	}
}
