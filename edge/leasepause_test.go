// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/rpc"
)

// TestEdge_HostPauseCarriesItsLeaseDeadline: the pause source a host flow gets also tells the
// transport when the host's lease ends as the edge counts it (its TTL less the margin, from
// before the acquire), which bounds every request's validity on the node; a lease that never
// expires (the local source's) has no deadline.
func TestEdge_HostPauseCarriesItsLeaseDeadline(t *testing.T) {
	for name, tc := range map[string]struct {
		source lease.Source
		want   bool
	}{
		"expiring": {expiring{Local: lease.NewLocal(lease.LocalOptions{}), ttl: 10 * time.Second}, true},
		"local":    {lease.NewLocal(lease.LocalOptions{}), false},
	} {
		t.Run(name, func(t *testing.T) {
			got := make(chan rpc.PauseSource, 1)
			fl := newFlow(func(_ context.Context, h hostflow.Host) hostflow.Result {
				select {
				case got <- h.Pause:
				default:
				}
				return hostflow.Result{Outcome: hostflow.Provisioned}
			})
			started := time.Now()
			run(t, edge.Options{Workers: 1, Interval: time.Hour, LeaseMargin: time.Second, Flow: fl, Mode: edge.Standalone(tc.source), Finder: &finder{ids: []string{"a"}}})
			var pause rpc.PauseSource
			select {
			case pause = <-got:
			case <-time.After(30 * time.Second):
				t.Fatal("no host flow ran")
			}
			ds, ok := pause.(rpc.DeadlineSource)
			if !ok {
				t.Fatalf("the host's pause source %T has no deadline", pause)
			}
			deadline, ok := ds.Deadline()
			if ok != tc.want {
				t.Fatalf("deadline %s, %v; want one: %v", deadline, ok, tc.want)
			}
			if ok && (deadline.Before(started.Add(9*time.Second)) || deadline.After(time.Now().Add(9*time.Second))) {
				t.Fatalf("deadline %v after the start, want 9 s (TTL 10 s less the 1 s margin) from the acquire", deadline.Sub(started))
			}
		})
	}
}

// TestEdge_LeaseTooShortForARequestIsLeaseLoss: a host stopped because its lease had under a
// second left, too little for any request to be valid on the node, is stopped by lease loss
// (failed, the node may be half done) like one whose lease ran out, not given back as paused.
func TestEdge_LeaseTooShortForARequestIsLeaseLoss(t *testing.T) {
	src := expiring{Local: lease.NewLocal(lease.LocalOptions{}), ttl: time.Minute}
	fl := newFlow(func(context.Context, hostflow.Host) hostflow.Result {
		return hostflow.Result{Outcome: hostflow.Paused, Err: fmt.Errorf("configure failed: %w", rpc.ErrDeadline)}
	})
	results := make(chan hostflow.Result, 1)
	run(t, edge.Options{Workers: 1, Interval: time.Hour, LeaseMargin: time.Second, Flow: fl, Mode: edge.Standalone(src), Finder: &finder{ids: []string{"a"}},
		OnResult: func(r hostflow.Result) {
			select {
			case results <- r:
			default:
			}
		}})
	select {
	case r := <-results:
		if r.Err == nil || !strings.Contains(r.Err.Error(), "stopped by lease loss") {
			t.Fatalf("result %+v, want stopped by lease loss", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
	}
}
