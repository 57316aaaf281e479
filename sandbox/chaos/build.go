// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// FailpointsTag is the build tag of the coordinator's test-only failpoints.
const FailpointsTag = "muster_failpoints"

// RepoRoot finds the monorepo's root (the directory holding go.work) from dir upwards.
func RepoRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "coordinator", "go.mod")); err == nil {
				return d, nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("chaos: no repository root (go.work with coordinator/) above " + dir)
		}
		d = parent
	}
}

// Build compiles muster-coordinator with the failpoints tag, muster-edge and muster-helper-sample
// into binDir. The coordinator so built is never a release binary: `make build` has no tag.
func Build(ctx context.Context, root, binDir string) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return fmt.Errorf("bin dir: %w", err)
	}
	steps := []struct {
		module string
		args   []string
	}{
		{"coordinator", []string{"build", "-tags", FailpointsTag, "-o", filepath.Join(binDir, "muster-coordinator"), "./cmd/muster-coordinator"}},
		{"edge", []string{"build", "-o", binDir + "/", "./cmd/muster-edge", "./cmd/muster-helper-sample"}},
	}
	for _, s := range steps {
		cmd := exec.CommandContext(ctx, "go", s.args...)
		cmd.Dir = filepath.Join(root, s.module)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GONOSUMDB=github.com/choria-io")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %v in %s: %w\n%s", s.args, s.module, err, out.String())
		}
	}
	return nil
}
