// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// collected gathers a stream's events.
type collected struct {
	mu sync.Mutex
	es []api.Event
}

func (c *collected) add(e api.Event) error {
	c.mu.Lock()
	c.es = append(c.es, e)
	c.mu.Unlock()
	return nil
}

func (c *collected) identities() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.es {
		out = append(out, e.Identity+">"+string(e.To))
	}
	return out
}

// TestEvents_AFollowedStreamResumesOnAnotherMember: a reader following one member's stream gets
// each transition as it is applied; resumed on another member after its last event id it gets
// the rest once, none twice; a filtered read without follow returns what is there and ends.
func TestEvents_AFollowedStreamResumesOnAnotherMember(t *testing.T) {
	ms := cluster(t, 3)
	ctx := ctxT(t)
	edge := edgeClient(t, ms[0].url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "n1"}, {Identity: "n2"}}}); err != nil {
		t.Fatal(err)
	}
	first := adminClient(t, ms[1].url)
	var got collected
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- first.Events(sctx, api.EventPosition{}, api.EventFilter{}, true, got.add) }()
	testkit.WaitFor(t, 30*time.Second, "both registrations streamed", func() bool { return len(got.identities()) == 2 })
	acq, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "ams", MaxNodes: 1})
	if err != nil || acq.Lease == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	testkit.WaitFor(t, 30*time.Second, "the grant streamed", func() bool { return len(got.identities()) == 3 })
	stop()
	<-done
	got.mu.Lock()
	last := got.es[len(got.es)-1]
	got.mu.Unlock()

	if _, err := edge.Report(ctx, api.ReportRequest{LeaseID: acq.Lease.ID, Token: acq.Lease.Token, Edge: "e1", Region: "ams",
		Results: []api.NodeResult{{Identity: acq.Lease.Nodes[0], Outcome: api.OutcomeProvisioned}}}); err != nil {
		t.Fatal(err)
	}
	second := adminClient(t, ms[2].url)
	var rest collected
	rctx, stopRest := context.WithCancel(ctx)
	go func() {
		done <- second.Events(rctx, api.EventPosition{Index: last.Index, Pos: last.Pos}, api.EventFilter{}, true, rest.add)
	}()
	testkit.WaitFor(t, 30*time.Second, "the report streamed by the other member", func() bool { return len(rest.identities()) == 1 })
	stopRest()
	<-done
	if got := rest.identities(); !slices.Equal(got, []string{acq.Lease.Nodes[0] + ">provisioned"}) {
		t.Fatalf("resumed after %s on another member: %v", last.EventID(), got)
	}

	var waiting collected
	if err := second.Events(ctx, api.EventPosition{}, api.EventFilter{Region: "ams", State: api.StateWaiting}, false, waiting.add); err != nil {
		t.Fatal(err)
	}
	if got := waiting.identities(); !slices.Equal(got, []string{"n1>waiting", "n2>waiting"}) {
		t.Fatalf("waiting events without follow: %v", got)
	}
}
