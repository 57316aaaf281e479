// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// TestBinary_RunsAgainstALabWithNoOtherSetUp: `muster-edge run --config FILE`, with the
// configuration the sandbox writes for the lab's region, provisions the region, serves
// choria-provisioner's metrics with the site label plus muster_edge_ ones, health and readiness,
// refuses an unauthenticated pause, and stops cleanly on SIGTERM.
func TestBinary_RunsAgainstALabWithNoOtherSetUp(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Emulated: 20})

	file, err := edgefile.Write(l, region, bins.helper)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bins.edge, "run", "--config", file, "--monitor-port", fmt.Sprint(testkit.FreePort(t)), "--loglevel", "info")
	cmd.Env = append(os.Environ(), "MUSTER_EDGE_PAUSE_TOKEN=pause-secret-0123")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // dies with a panicking test
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	logs := &testkit.LogBuffer{}
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg="monitor listening" addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logs, line)
			if m := re.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("muster-edge log:\n%s", logs.Tail(8<<10))
		}
	})

	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(time.Minute):
		t.Fatal("muster-edge never said where its monitor listens")
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	testkit.WaitFor(t, 2*time.Minute, "20 nodes provisioned per /metrics", func() bool {
		_, body := get("/metrics")
		return strings.Contains(body, `choria_provisioner_provisioned{site="eu"} 20`)
	})
	_, body := get("/metrics")
	for _, name := range []string{
		`choria_provisioner_rpc_time_count{rpc="rpcutil#inventory",site="eu"}`,
		`choria_provisioner_discovered{site="eu"} 20`,
		`choria_provisioner_helper_time_count{site="eu"} 20`,
		`choria_provisioner_busy_workers{site="eu"} 0`,
		`choria_provisioner_paused{site="eu"} 0`,
		`choria_provisioner_discover_cycles{site="eu"}`,
		`muster_edge_results_total{outcome="provisioned",site="eu"} 20`,
	} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d", code)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz %d", code)
	}
	resp, err := http.Post(base+"/pause", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unauthenticated pause: %d", resp.StatusCode)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/pause", nil)
	req.Header.Set("Authorization", "Bearer pause-secret-0123")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("pause with the token: %v %v", resp, err)
	}
	testkit.WaitFor(t, 10*time.Second, "paused gauge", func() bool {
		_, body := get("/metrics")
		return strings.Contains(body, `choria_provisioner_paused{site="eu"} 1`)
	})

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("muster-edge exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("muster-edge did not exit within 30s of SIGTERM")
	}
	if strings.Contains(logs.String(), "pause-secret-0123") || strings.Contains(logs.String(), l.Info().Regions[region].ProvisioningToken) {
		t.Fatal("a secret reached the log")
	}
}
