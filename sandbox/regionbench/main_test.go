// SPDX-License-Identifier: Apache-2.0

package regionbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed96588659/muster/sandbox/internal/gobuild"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// bins are the binaries built once for the package.
var bins struct{ coordinator, helper string }

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		return m.Run() // no benchmark asked for: nothing to build (make test)
	}
	dir, err := os.MkdirTemp("", "muster-regionbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bins.coordinator = filepath.Join(dir, "muster-coordinator")
	bins.helper = filepath.Join(dir, edgefile.SampleHelper)
	if err := gobuild.All(context.Background(),
		gobuild.Target{Out: bins.coordinator, Pkg: "./cmd/muster-coordinator", ModuleDir: "../../coordinator"},
		gobuild.Target{Out: bins.helper, Pkg: "./cmd/muster-helper-sample", ModuleDir: "../../edge"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
