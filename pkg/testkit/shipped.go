// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ShippedFiles are the repository's files that show secrets as MUSTER_* assignments: what the
// packages install as /etc/muster/*.env and the Kubernetes Secrets example.
func ShippedFiles() []string {
	return []string{
		"deploy/systemd/coordinator.env.example",
		"deploy/systemd/edge.env.example",
		"deploy/kubernetes/secrets.example.yaml",
	}
}

// Assignment is one MUSTER_* variable a shipped file sets or shows commented out.
type Assignment struct {
	File   string // repository path
	Line   int
	Name   string
	Value  string
	Active bool // false: commented out, as the operator finds it
}

// assignment is an environment file's NAME=VALUE or a Secret's NAME: VALUE, either behind a '#'
var assignment = regexp.MustCompile(`^\s*(#\s*)?(MUSTER_[A-Z0-9_]+)\s*(?:=|:\s)\s*(\S+)\s*$`)

// ShippedAssignments reads every MUSTER_* assignment of ShippedFiles under the repository root.
func ShippedAssignments(t testing.TB, root string) []Assignment {
	t.Helper()
	var out []Assignment
	for _, rel := range ShippedFiles() {
		f, err := os.Open(filepath.Join(root, rel))
		if err != nil {
			t.Fatalf("shipped file: %v", err)
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			m := assignment.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			out = append(out, Assignment{File: rel, Line: n, Name: m[2], Value: strings.Trim(m[3], `"'`), Active: m[1] == ""})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no MUSTER_* assignment in %v: the files moved or their form changed", ShippedFiles())
	}
	return out
}
