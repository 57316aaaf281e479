// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"strings"
	"testing"
)

// A grant the edge did not ask for in that shape is refused with an error naming what was
// wrong, and nothing of it is handed on: more nodes than asked would break the edge's bound on
// leased hosts, a node listed twice would run two host flows on one node.
func TestCoordinator_RefusesAGrantOfAnotherShapeThanAsked(t *testing.T) {
	for _, tc := range []struct {
		name, nodes string
		max         int
		want        string
	}{
		{"more nodes than asked", `["n1","n2","n3"]`, 2, "3 nodes, but this edge asked for at most 2"},
		{"a node listed twice", `["n1","n2","n1"]`, 3, "lists n1 twice"},
		{"an empty identity", `["n1",""]`, 3, "empty node identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, src, rec := newFakeSource(t)
			f.acquire.Store(`{"paused":true,"lease":{"id":"l-9","edge":"edge-eu-1","region":"eu","nodes":` + tc.nodes + `,"token":4,"ttl":"30s"},"queue":{"waiting":1,"leased":3}}`)
			g, err := src.Acquire(context.Background(), tc.max, 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "l-9") {
				t.Fatalf("err = %v, want one naming lease l-9 and %q", err, tc.want)
			}
			if g.Lease != nil {
				t.Fatalf("the refused lease was handed on: %+v", *g.Lease)
			}
			if !g.Paused {
				t.Error("the answer's pause flag was dropped with the lease")
			}
			if got := rec.all(); len(got) != 0 {
				t.Errorf("a refused answer's queue reached Changed: %+v", got)
			}
		})
	}
}

// A grant of exactly what was asked, each node once, is taken.
func TestCoordinator_TakesAGrantOfTheAskedShape(t *testing.T) {
	f, src, _ := newFakeSource(t)
	f.acquire.Store(`{"paused":false,"lease":{"id":"l-1","edge":"edge-eu-1","region":"eu","nodes":["n1","n2"],"token":4,"ttl":"30s"}}`)
	g, err := src.Acquire(context.Background(), 2, 0)
	if err != nil || g.Lease == nil || len(g.Lease.Nodes) != 2 {
		t.Fatalf("acquire: %+v, %v", g, err)
	}
}
