// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed96588659/muster/pkg/gobuild"
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
	if err := gobuild.Build(ctx, filepath.Join(root, "coordinator"), "-tags", FailpointsTag, "-o", filepath.Join(binDir, "muster-coordinator"), "./cmd/muster-coordinator"); err != nil {
		return err
	}
	return gobuild.Build(ctx, filepath.Join(root, "edge"), "-o", binDir+"/", "./cmd/muster-edge", "./cmd/muster-helper-sample")
}
