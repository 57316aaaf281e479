// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// Regions of the suite. Each test uses its own, so the one ledger holds them apart; every edge
// credential is bound to one of them.
var suiteRegions = []string{"eu", "us", "pz", "ll", "jk", "jl", "ju", "bs", "bc1", "bc2", "bc3", "bc4", "bc5", "bc6", "bc7", "bc8", "bc9", "tx", "pl", "le"}

// edgesPerRegion is how many edge credentials each region gets (edge-<region>-<n>.mcollective).
const edgesPerRegion = 2

// Built once for the package: the coordinator binary, the sample helper, and the cluster.
var suite struct {
	coordinator string
	helper      string
	cluster     *cluster
	// benchRuns counts the cluster benchmark's labs: each needs a fresh region, since the
	// ledger keeps the identities of the last one as provisioned.
	benchRuns int
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	b, err := labkit.BuildBinaries(context.Background(), "muster-clustersuite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Remove()
	dir := b.Dir
	suite.coordinator, suite.helper = b.Coordinator, b.Helper
	var edges []string
	for _, r := range suiteRegions {
		for n := 1; n <= edgesPerRegion; n++ {
			edges = append(edges, fmt.Sprintf("%s@%s=%s", lab.ClientIdentity(r, n), r, edgeToken(r, n)))
		}
	}
	suite.cluster, err = startCluster(suite.coordinator, filepath.Join(dir, "cluster"), edges)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start coordinators:", err)
		if suite.cluster != nil {
			_ = suite.cluster.Stop()
		}
		return 1
	}
	code := m.Run()
	if err := suite.cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code != 0 {
		fmt.Fprintln(os.Stderr, suite.cluster.Logs(4000))
	}
	return code
}
