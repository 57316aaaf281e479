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
	conf := fmt.Sprintf(`# written by muster-sandbox: a node in provisioning mode; choria_provision#configure rewrites it
identity = %s
logfile = %s
loglevel = %s
plugin.choria.server.provision = true
plugin.choria.use_srv = false
`, l.Spec.Identity, filepath.Join(dir, LogFile), l.LogLevel)
	files := map[string][]byte{SpecFile: spec, ConfigFile: []byte(conf), JWTFile: []byte(l.JWT)}
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
