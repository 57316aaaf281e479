// SPDX-License-Identifier: Apache-2.0

package labkit

import (
	"context"
	"os"
	"path/filepath"

	"github.com/seed96588659/muster/pkg/gobuild"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// Binaries are the coordinator and the sample helper a suite's cluster runs, built once for its
// package into a temporary directory that Remove deletes.
type Binaries struct {
	Dir, Coordinator, Helper string
}

// BuildBinaries builds muster-coordinator and the sample helper into a new temporary directory
// named from prefix; the calling package sits two levels below the repository's root.
func BuildBinaries(ctx context.Context, prefix string) (*Binaries, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	b := &Binaries{Dir: dir, Coordinator: filepath.Join(dir, "muster-coordinator"), Helper: filepath.Join(dir, edgefile.SampleHelper)}
	if err := gobuild.All(ctx,
		gobuild.Target{Out: b.Coordinator, Pkg: "./cmd/muster-coordinator", ModuleDir: "../../coordinator"},
		gobuild.Target{Out: b.Helper, Pkg: "./cmd/muster-helper-sample", ModuleDir: "../../edge"}); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

// Remove deletes the binaries' directory and whatever the suite put in it.
func (b *Binaries) Remove() error { return os.RemoveAll(b.Dir) }
