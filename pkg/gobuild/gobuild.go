// SPDX-License-Identifier: Apache-2.0

// Package gobuild runs `go build` inside one of the monorepo's modules, as make build does: the
// chaos runner and the suites build the coordinator and edge binaries they start this way, and
// tools/benchreport runs the benchmarks' `go test` with its Env. It depends on the standard
// library only.
package gobuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Env is the environment go needs in a module of this repository: each module resolves its own
// go.mod (GOWORK=off), and go-choria is served outside the checksum database.
func Env() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GONOSUMDB=github.com/choria-io")
}

// Build runs `go build args...` in moduleDir; a failure carries go's output.
func Build(ctx context.Context, moduleDir string, args ...string) error {
	return BuildEnv(ctx, moduleDir, nil, args...)
}

// BuildEnv is Build with variables added to Env, e.g. CGO_ENABLED=0 for a release build.
func BuildEnv(ctx context.Context, moduleDir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build"}, args...)...)
	cmd.Dir = moduleDir
	cmd.Env = append(Env(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %v in %s: %w\n%s", args, moduleDir, err, out)
	}
	return nil
}

// Target is one binary to build: its output path, its package and the module directory it is
// built in.
type Target struct{ Out, Pkg, ModuleDir string }

// All builds every target in turn; the first failure stops it.
func All(ctx context.Context, targets ...Target) error {
	for _, t := range targets {
		if err := Build(ctx, t.ModuleDir, "-o", t.Out, t.Pkg); err != nil {
			return err
		}
	}
	return nil
}
