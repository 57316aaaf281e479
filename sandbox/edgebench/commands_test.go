// SPDX-License-Identifier: Apache-2.0

package edgebench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// helperScript is the exec helper both provisioners fork per node: it reads the request and
// answers a fixed configuration, which the emulated configure accepts (it checks only the
// provision flag).
const helperScript = `#!/bin/sh
cat >/dev/null
printf '%s\n' '{"configuration":{"plugin.choria.server.provision":"false","identity":"x"}}'
`

// writeHelper writes helperScript into dir and returns its path.
func writeHelper(b *testing.B, dir string) string {
	b.Helper()
	path := filepath.Join(dir, "helper.sh")
	if err := os.WriteFile(path, []byte(helperScript), 0o755); err != nil {
		b.Fatalf("write helper: %v", err)
	}
	return path
}

// binDir is where muster-edge and muster-helper-sample are: MUSTER_BIN_DIR, else the
// repository's bin/ (make build).
func binDir(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("MUSTER_BIN_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "bin")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		b.Fatalf("bin dir %s: %v", dir, err)
	}
	for _, name := range []string{"muster-edge", "muster-helper-sample"} {
		if _, err := os.Stat(filepath.Join(abs, name)); err != nil {
			b.Fatalf("%s not found in %s (run make build, or set MUSTER_BIN_DIR): %v", name, abs, err)
		}
	}
	return abs
}

// helperKind is how the edge gets each node's configuration.
type helperKind string

const (
	// execShell forks helperScript per node, as choria-provisioner does.
	execShell helperKind = "exec"
	// execSample forks muster-helper-sample (Go) per node.
	execSample helperKind = "exec-go"
	// persistent keeps one muster-helper-sample --persistent for every node.
	persistent helperKind = "persistent"
)

// edgeCommand runs muster-edge standalone on the lab with workers hosts at once.
func edgeCommand(bin, script string, kind helperKind, workers int) provisioner {
	return func(l *lab.Lab, _ string) (*exec.Cmd, error) {
		broker := l.Region(region).Broker().URL()
		sample := filepath.Join(bin, edgefile.SampleHelper)
		file, err := edgefile.Write(l, region, sample)
		if err != nil {
			return nil, err
		}
		args := []string{"run", "--config", file, "--workers", strconv.Itoa(workers), "--loglevel", "warn"}
		switch kind {
		case execShell:
			args = append(args, "--helper", shellJoin(script))
		case execSample:
			args = append(args, "--helper", shellJoin(sample, "--broker", broker))
		case persistent:
			args = append(args, "--helper", shellJoin(sample, "--persistent", "--broker", broker), "--helper-persistent")
		default:
			return nil, fmt.Errorf("unknown helper kind %q", kind)
		}
		return exec.Command(filepath.Join(bin, "muster-edge"), args...), nil
	}
}

// choriaProvisionerCommand runs choria-provisioner with its configuration for the lab, as the
// lab's second client identity so it never shares a caller with an edge.
func choriaProvisionerCommand(bin, script string, workers int) provisioner {
	return func(l *lab.Lab, dir string) (*exec.Cmd, error) {
		info, ok := l.Info().Regions[region]
		if !ok || len(info.Clients) < 2 {
			return nil, fmt.Errorf("lab region %s: want at least 2 client identities", region)
		}
		client := info.Clients[1]
		cfg := strings.Join([]string{
			"workers: " + strconv.Itoa(workers),
			"interval: 1m",
			"loglevel: warn",
			"logfile: " + strconv.Quote(filepath.Join(dir, "choria-provisioner.log")),
			"helper: " + strconv.Quote(script),
			"token: " + strconv.Quote(info.ProvisioningToken),
			"site: " + region,
			"broker_provisioning_password: " + strconv.Quote(info.ProvisioningPassword),
			"jwt_verify_cert: " + strconv.Quote(info.JWTSignerPublicKeyFile),
			"features:",
			"  jwt: true",
			"",
		}, "\n")
		path := filepath.Join(dir, "choria-provisioner.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return nil, fmt.Errorf("write choria-provisioner config: %w", err)
		}
		cmd := exec.Command(bin, "run", "--config", path, "--choria-config", client.Config)
		// Choria takes the client identity from $USER unless MCOLLECTIVE_CERTNAME is set.
		cmd.Env = append(os.Environ(), "MCOLLECTIVE_CERTNAME="+client.Identity)
		return cmd, nil
	}
}

// shellJoin quotes args for the helper setting, which the edge and choria-provisioner split as a
// shell would.
func shellJoin(args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}
