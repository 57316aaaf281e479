// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
)

const (
	eu1Token = "token-of-edge-eu-1-0123456789"
	eu2Token = "token-of-edge-eu-2-0123456789"
)

// TestEdgeCredential_BoundToItsEdgeAndRegions: edge eu-1's token may act as eu-1 in eu only. It
// tries to register in us, to renew and report for eu-2's lease, and to acquire as eu-2: each
// is refused with 403 and changes nothing, on the leader and through a follower alike.
func TestEdgeCredential_BoundToItsEdgeAndRegions(t *testing.T) {
	ms := clusterWith(t, 2, func(c *httpapi.Config) {
		c.Edges = []httpapi.EdgeCredential{{Token: eu1Token, Edge: "eu-1", Regions: []string{"eu"}}, {Token: eu2Token, Edge: "eu-2", Regions: []string{"eu"}}}
	})
	leader, follower := ms[0], ms[1]
	ctx := ctxT(t)
	eu1, eu2 := tokenClient(t, eu1Token, []string{follower.url}), tokenClient(t, eu2Token, []string{leader.url})

	if _, err := eu1.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "eu-1", Nodes: []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}}}); err != nil {
		t.Fatalf("eu-1 registers in eu: %v", err)
	}
	theirs, err := eu2.Acquire(ctx, api.AcquireRequest{Edge: "eu-2", Region: "eu", MaxNodes: 1})
	if err != nil || theirs.Lease == nil {
		t.Fatalf("eu-2 acquires: %+v %v", theirs, err)
	}
	state := func() string {
		nodes, _, _ := leader.svc.Ledger().Nodes(ledgerAll())
		leases, _ := leader.svc.Ledger().Leases()
		return fmt.Sprintf("%+v %+v", nodes, leases)
	}
	before := state()

	ls := theirs.Lease
	for _, m := range []*member{leader, follower} {
		for name, call := range map[string]func() error{
			"register in us": func() error {
				_, err := eu1.Register(ctx, api.RegisterRequest{Region: "us", Edge: "eu-1", Nodes: []api.RegisterNode{{Identity: "n9"}}})
				return err
			},
			"register as eu-2": func() error {
				_, err := eu1.Register(ctx, api.RegisterRequest{Region: "eu", Edge: "eu-2", Nodes: []api.RegisterNode{{Identity: "n9"}}})
				return err
			},
			"acquire as eu-2": func() error {
				_, err := eu1.Acquire(ctx, api.AcquireRequest{Edge: "eu-2", Region: "eu", MaxNodes: 1})
				return err
			},
			"renew eu-2's lease": func() error {
				_, err := eu1.Renew(ctx, api.RenewRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "eu-2", Region: "eu"})
				return err
			},
			"renew eu-2's lease as eu-1": func() error {
				_, err := eu1.Renew(ctx, api.RenewRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "eu-1", Region: "eu"})
				return err
			},
			"report for eu-2's lease as eu-1": func() error {
				_, err := eu1.Report(ctx, api.ReportRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "eu-1", Region: "eu",
					Results: []api.NodeResult{{Identity: ls.Nodes[0], Outcome: api.OutcomeProvisioned}}})
				return err
			},
			"heartbeat as eu-2": func() error {
				_, err := eu1.Heartbeat(ctx, api.HeartbeatRequest{Edge: "eu-2", Region: "eu"})
				return err
			},
		} {
			err := call()
			var ae *api.Error
			if !asAPIError(err, &ae) || ae.Status != http.StatusForbidden || ae.Code != api.CodeWrongEdge {
				t.Errorf("via %s: %s: %v, want 403 %s", m.id, name, err, api.CodeWrongEdge)
			}
		}
		eu1 = tokenClient(t, eu1Token, []string{leader.url})
	}
	if after := state(); after != before {
		t.Errorf("a refused request changed the ledger:\n%s\n%s", before, after)
	}
	if _, err := eu2.Renew(ctx, api.RenewRequest{LeaseID: ls.ID, Token: ls.Token, Edge: "eu-2", Region: "eu"}); err != nil {
		t.Fatalf("eu-2 renews its own lease: %v", err)
	}
}

func asAPIError(err error, target **api.Error) bool { return errors.As(err, target) }
