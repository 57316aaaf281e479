// SPDX-License-Identifier: Apache-2.0

// Package realnode is the main of a real go-choria server in provisioning mode, run as its own
// process from its own copy of the sandbox binary (the provision agent keeps its lock, ECDH keys
// and build info process-wide, restart re-execs the binary and release_update replaces it).
package realnode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Files inside a node directory.
const (
	SpecFile   = "node.json"
	ConfigFile = "server.conf"
	JWTFile    = "provisioning.jwt"
	StatusFile = "status.json"
	BinaryName = "muster-sandbox"
	LogFile    = "server.log"
)

// Spec is what the lab tells a node process about itself; it never changes across restarts.
type Spec struct {
	// Identity is the node's Choria identity.
	Identity string `json:"identity"`
	// Region is recorded with every action.
	Region string `json:"region"`
	// ActionsFile is the shared DIR/actions.jsonl.
	ActionsFile string `json:"actions_file"`
	// Version is reported when the binary carries no version trailer.
	Version string `json:"version"`
	// RecordDiscovery also records discovery#ping; rpcutil and choria_provision are always recorded.
	RecordDiscovery bool `json:"record_discovery"`
}

// ReadSpec reads dir/node.json.
func ReadSpec(dir string) (Spec, error) {
	var s Spec
	if err := readJSON(filepath.Join(dir, SpecFile), "node spec", &s); err != nil {
		return s, err
	}
	if s.Identity == "" {
		return s, fmt.Errorf("node spec %s: identity is empty", filepath.Join(dir, SpecFile))
	}
	return s, nil
}

// readJSON decodes the JSON file at path into v; what names the file in errors.
func readJSON(path, what string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s %s: %w", what, path, err)
	}
	return nil
}
