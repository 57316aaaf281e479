// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/seed96588659/muster/sandbox/internal/atomicfile"
)

// Status is what a node process writes to dir/status.json at each (re)start, so the lab and
// tests can see a restart really happened and what the node came back as.
type Status struct {
	Identity     string    `json:"identity"`
	PID          int       `json:"pid"`
	Version      string    `json:"version"`
	Provisioning bool      `json:"provisioning"`
	Connected    bool      `json:"connected"`
	Started      time.Time `json:"started"`
	// Starts counts process starts in this directory, including restarts by exec.
	Starts int    `json:"starts"`
	Error  string `json:"error,omitempty"`
}

// ReadStatus reads dir/status.json.
func ReadStatus(dir string) (Status, error) {
	var s Status
	err := readJSON(filepath.Join(dir, StatusFile), "node status", &s)
	return s, err
}

func writeStatus(dir string, s Status) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode node status: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, StatusFile), b, 0o644)
}
