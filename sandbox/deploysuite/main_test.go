// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed96588659/muster/pkg/gobuild"
)

// bins are built once for the package.
var bins struct {
	coordinator string // muster-coordinator
	edge        string // muster-edge
	helper      string // muster-helper-sample
	coordcheck  string // testdata/coordcheck against the checkout's coordinator/config
}

// root is the repository's top directory.
var root string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	root = filepath.Clean(filepath.Join(wd, "..", ".."))
	dir, err := os.MkdirTemp("", "muster-deploysuite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bins.coordinator = filepath.Join(dir, "muster-coordinator")
	bins.edge = filepath.Join(dir, "muster-edge")
	bins.helper = filepath.Join(dir, "muster-helper-sample")
	bins.coordcheck = filepath.Join(dir, "coordcheck")
	ctx := context.Background()
	builds := []func() error{
		func() error {
			return gobuild.Build(ctx, filepath.Join(root, "coordinator"), "-o", bins.coordinator, "./cmd/muster-coordinator")
		},
		func() error {
			return gobuild.Build(ctx, filepath.Join(root, "edge"), "-o", bins.edge, "./cmd/muster-edge")
		},
		func() error {
			return gobuild.Build(ctx, filepath.Join(root, "edge"), "-o", bins.helper, "./cmd/muster-helper-sample")
		},
		func() error { return buildCoordcheck(ctx, filepath.Join(dir, "coordcheck-src"), bins.coordcheck) },
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, b := range builds {
		wg.Go(func() { errs[i] = b() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// buildCoordcheck builds testdata/coordcheck in a throwaway module that requires the checkout's
// coordinator module, so the sandbox module's go.mod needs no coordinator requirement.
func buildCoordcheck(ctx context.Context, src, out string) error {
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	main, err := os.ReadFile(filepath.Join("testdata", "coordcheck", "main.go"))
	if err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "coordinator", "go.sum"))
	if err != nil {
		return err
	}
	coordMod, err := os.ReadFile(filepath.Join(root, "coordinator", "go.mod"))
	if err != nil {
		return err
	}
	gomod := strings.Join([]string{
		"module deploysuite.local/coordcheck",
		"",
		goLine(string(coordMod)),
		"",
		"require github.com/seed96588659/muster/coordinator v0.0.0-00010101000000-000000000000",
		"",
		"replace github.com/seed96588659/muster/coordinator => " + filepath.Join(root, "coordinator"),
		"",
		"replace github.com/seed96588659/muster/pkg => " + filepath.Join(root, "pkg"),
		"",
	}, "\n")
	for name, body := range map[string][]byte{"main.go": main, "go.sum": sum, "go.mod": []byte(gomod)} {
		if err := os.WriteFile(filepath.Join(src, name), body, 0o644); err != nil {
			return err
		}
	}
	return gobuild.Build(ctx, src, "-o", out, ".")
}

// goLine is the go directive of a go.mod.
func goLine(gomod string) string {
	for _, l := range strings.Split(gomod, "\n") {
		if strings.HasPrefix(l, "go ") {
			return l
		}
	}
	return "go 1.26"
}
