// SPDX-License-Identifier: Apache-2.0

package clustersuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// lostReports is a lease source whose reports never arrive: as far as the ledger can tell, the
// edge died after restarting its nodes and before reporting them.
type lostReports struct{ lease.ClusterSource }

// Carries is false: every report goes alone, through Report, and is lost there.
func (lostReports) Carries() bool { return false }

func (lostReports) Report(context.Context, api.Lease, []api.NodeResult) (api.ReportResponse, error) {
	return api.ReportResponse{}, errors.New("report lost: the edge died first")
}

// replyLost is a host flow whose restart's reply never arrives: the node restarted, the edge
// cannot tell, and must settle it by rediscovery.
type replyLost struct{ edge.Flow }

func (f replyLost) Run(ctx context.Context, h hostflow.Host) hostflow.Result {
	res := f.Flow.Run(ctx, h)
	if res.Outcome == hostflow.Provisioned {
		res = hostflow.Result{Identity: res.Identity, Outcome: hostflow.Unknown, Step: "restart", Err: errors.New("restart: no reply (lost by the test)")}
	}
	return res
}

// An edge that restarted its nodes and died before its reports arrived: started again on the
// same state_dir, it reports them from its journal and the ledger records them provisioned;
// started without it (its disk lost), the ledger offers them again, the edge finds them out of
// provisioning mode and reports them gone. Either way no node is restarted twice and none is
// abandoned. An edge stopped while its restarts' replies were lost, before it could confirm
// them, reports nothing of them (not a failure: the ledger would then refuse the truth the next
// run finds) and the next run records them provisioned.
func TestCluster_EdgeDiedBeforeReporting(t *testing.T) {
	for _, tc := range []struct {
		name, region string
		keepState    bool
		unanswered   bool
		want         api.NodeState
	}{
		{"journal kept", "jk", true, false, api.StateProvisioned},
		{"journal lost", "jl", false, false, api.StateGone},
		{"stopped before confirming", "ju", true, true, api.StateProvisioned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const count = 6
			l := startLab(t, lab.Options{Regions: []string{tc.region}, Emulated: count})
			ctx := ctxT(t, 4*time.Minute)
			tune := func(o *edge.Options) { o.Mode = edge.Cluster(lostReports{o.Mode.Source().(lease.ClusterSource)}) }
			if tc.unanswered {
				tune = func(o *edge.Options) { o.Flow, o.ConfirmAfter = replyLost{o.Flow}, time.Hour }
			}
			first := startEdge(t, l, edgeSpec{region: tc.region, n: 1, tuneEdge: tune})
			testkit.WaitFor(t, 2*time.Minute, "every node restarted by the first edge", func() (bool, string) {
				rep := labkit.LabReport(t, l)
				done := 0
				for i := range count {
					if n := rep.Nodes[emu(tc.region, i)]; n != nil && n.Actions["choria_provision#restart"] != nil && n.Actions["choria_provision#restart"].OK == 1 {
						done++
					}
				}
				return done == count, fmt.Sprintf("%d of %d", done, count)
			})
			first.Shutdown(t)
			if !tc.keepState {
				if err := os.RemoveAll(filepath.Join(filepath.Dir(l.InfoFile()), "edge-state", first.Name)); err != nil {
					t.Fatal(err)
				}
			}
			ns, err := suite.cluster.nodes(ctx, tc.region)
			if err != nil {
				t.Fatal(err)
			}
			for id, n := range ns {
				if n.State != api.StateLeased {
					t.Fatalf("%s is %s before the edge started again, want leased (no report arrived)", id, n.State)
				}
			}

			startEdge(t, l, edgeSpec{region: tc.region, n: 1})
			waitNodesIn(t, ctx, tc.region, count, tc.want, 3*time.Minute, "every node "+string(tc.want))
			for i := range count {
				n, err := suite.cluster.admin.Node(ctx, emu(tc.region, i))
				if err != nil {
					t.Fatal(err)
				}
				if tc.want == api.StateGone && !strings.Contains(n.LastError, "provisioning mode") {
					t.Errorf("%s is gone with error %q, want the reason it was not found", n.Identity, n.LastError)
				}
			}
			rep := labkit.LabReport(t, l)
			if len(rep.DoubleProvisioned) > 0 {
				t.Fatalf("double provisioned: %+v", rep.DoubleProvisioned)
			}
			for i := range count {
				id := emu(tc.region, i)
				if got := rep.Nodes[id]; got == nil || got.Actions["choria_provision#restart"] == nil || got.Actions["choria_provision#restart"].OK != 1 {
					t.Errorf("%s: restarts %+v, want exactly one", id, got)
				}
			}
		})
	}
}
