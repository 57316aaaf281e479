// SPDX-License-Identifier: Apache-2.0

package regionbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/seed96588659/muster/sandbox/labkit"
)

// bins are the binaries built once for the package.
var bins struct{ coordinator, helper string }

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		return m.Run() // no benchmark asked for: nothing to build (make test)
	}
	b, err := labkit.BuildBinaries(context.Background(), "muster-regionbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Remove()
	bins.coordinator, bins.helper = b.Coordinator, b.Helper
	return m.Run()
}
