// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NodePackage is the import path of the muster-sandbox command real nodes run.
const NodePackage = "github.com/seed96588659/muster/sandbox/cmd/muster-sandbox"

// BuildNodeBinary compiles muster-sandbox into outDir with `go build` and returns its path. Run
// it from inside the sandbox module (any of its test packages); tests call it once per package,
// e.g. in TestMain.
func BuildNodeBinary(ctx context.Context, outDir string) (string, error) {
	out := filepath.Join(outDir, "muster-sandbox")
	// Without symbol tables and DWARF the binary is a quarter smaller and its bzip2 release half
	// the size: a real node's release_update bunzips it inside go-choria's 20 s agent timeout
	// (measured on the 2-core dev machine: 4.8 s unstripped, 2.8 s stripped).
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags=-s -w", "-o", out, NodePackage)
	cmd.Env = os.Environ()
	if os.Getenv("GOWORK") == "" {
		cmd.Env = append(cmd.Env, "GOWORK=off")
	}
	if !strings.Contains(os.Getenv("GOFLAGS"), "-mod=") {
		cmd.Env = append(cmd.Env, "GOFLAGS=-mod=mod")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w: %s", NodePackage, err, strings.TrimSpace(string(b)))
	}
	return out, nil
}
