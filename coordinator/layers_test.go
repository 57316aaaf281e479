// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// The member's layers import only those below them (DESIGN.md, Layers): raftnode knows no
// ledger, httpapi no member, the edge calls' rules no HTTP, and only the member joins the
// layers below it (the binary serves it over httpapi).
func TestLayers_EachPackageImportsOnlyThoseBelowIt(t *testing.T) {
	const module = "github.com/seed96588659/muster/"
	below := map[string][]string{
		"ledger":     {"pkg/api"},
		"metrics":    {"pkg/api"},
		"raftnode":   nil,
		"statuspage": nil,
		"httpapi":    {"pkg/api"},
		"lessor":     {"coordinator/ledger", "coordinator/metrics", "pkg/api"},
		"edgecalls":  {"coordinator/lessor", "coordinator/ledger", "pkg/api"},
		".":          {"coordinator/edgecalls", "coordinator/lessor", "coordinator/ledger", "coordinator/metrics", "coordinator/raftnode", "pkg/api"},
	}
	for dir, allowed := range below {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("read package %s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			name, ours := strings.CutPrefix(imp, module)
			if ours && !slices.Contains(allowed, name) {
				t.Errorf("package %s imports %s; it may import only %v of Muster's", dir, name, allowed)
			}
		}
	}
}
