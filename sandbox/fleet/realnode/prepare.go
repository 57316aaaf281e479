// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Layout describes a node directory the lab prepares before starting the node process.
type Layout struct {
	// Dir is the node's own directory (config, ssl, JWT, binary copy, logs).
	Dir string
	// Spec is written to Dir/node.json.
	Spec Spec
	// JWT is the signed provisioning.jwt.
	JWT string
	// Binary is a node binary carrying Spec.Version in its trailer; it is hard-linked (or
	// copied) to Dir/muster-sandbox, which release_update may later replace.
	Binary string
	// LogLevel of the Choria server log Dir/server.log; info when empty.
	LogLevel string
}

// Prepare writes a node directory: spec, a provisioning-mode server.conf, provisioning.jwt,
// an empty ssl directory and the node's binary. It returns the binary path to execute.
func Prepare(l Layout) (string, error) {
	dir, err := filepath.Abs(l.Dir)
	if err != nil {
		return "", fmt.Errorf("node dir: %w", err)
	}
	if l.Spec.Identity == "" {
		return "", fmt.Errorf("prepare node in %s: empty identity", dir)
	}
	if l.LogLevel == "" {
		l.LogLevel = "info"
	}
	if err := os.MkdirAll(filepath.Join(dir, "ssl"), 0o700); err != nil {
		return "", fmt.Errorf("prepare node %s: %w", l.Spec.Identity, err)
	}
	spec, err := json.MarshalIndent(l.Spec, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode node spec: %w", err)
	}
	files := map[string][]byte{SpecFile: spec, ConfigFile: provisioningConfig(dir, l.Spec.Identity, l.LogLevel), JWTFile: []byte(l.JWT)}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			return "", fmt.Errorf("prepare node %s: %w", l.Spec.Identity, err)
		}
	}
	bin := filepath.Join(dir, BinaryName)
	_ = os.Remove(bin)
	if err := os.Link(l.Binary, bin); err != nil {
		if err := copyFile(l.Binary, bin); err != nil {
			return "", fmt.Errorf("prepare node %s: %w", l.Spec.Identity, err)
		}
	}
	return bin, nil
}

// provisioningConfig is the server.conf of a node in provisioning mode.
func provisioningConfig(dir, identity, logLevel string) []byte {
	return fmt.Appendf(nil, `# written by muster-sandbox: a node in provisioning mode; choria_provision#configure rewrites it
identity = %s
logfile = %s
loglevel = %s
plugin.choria.server.provision = true
plugin.choria.use_srv = false
`, identity, filepath.Join(dir, LogFile), logLevel)
}

// Revert puts a stopped node's configuration back in provisioning mode, as a configuration
// management run that rewrites server.conf would: the node keeps its keys, certificate and
// binary (its version), and starts in provisioning mode again.
func Revert(dir, identity string) error {
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), provisioningConfig(dir, identity, "info"), 0o600); err != nil {
		return fmt.Errorf("revert node %s to provisioning mode: %w", identity, err)
	}
	return nil
}

// Wipe removes what a node made of itself while it ran (keys, certificate, configuration,
// upgraded binary), keeping its logs and status, so Prepare can lay it out as a new machine.
func Wipe(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("wipe node dir: %w", err)
	}
	for _, e := range entries {
		switch e.Name() {
		case LogFile, StatusFile, "node.log":
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("wipe node dir: %w", err)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy binary: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("copy binary: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy binary: %w", err)
	}
	return out.Close()
}
