// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// reorderingSource is a coordinator whose answers the test orders: each renewal waits for the
// answer the test hands it, each heartbeat answer is the flag the test sends, and acquires are
// answered as of index 10, not paused.
type reorderingSource struct {
	*lease.Local
	clusterParts
	ttl      time.Duration
	renewals chan chan lease.Grant
	beats    chan lease.Grant
	acked    chan struct{}
}

func (s *reorderingSource) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	g, err := s.Local.Acquire(ctx, max, wait)
	if g.Lease != nil {
		g.Lease.TTL = api.Duration(s.ttl)
	}
	g.PauseAt = api.PauseMark{Epoch: 1, AsOf: 10}
	return g, err
}

func (s *reorderingSource) Renew(ctx context.Context, l api.Lease) (lease.Grant, error) {
	answer := make(chan lease.Grant)
	select {
	case s.renewals <- answer:
	case <-ctx.Done():
		return lease.Grant{}, ctx.Err()
	}
	select {
	case g := <-answer:
		g.Lease = &l
		return g, nil
	case <-ctx.Done():
		return lease.Grant{}, ctx.Err()
	}
}

func (s *reorderingSource) WatchPause(ctx context.Context, changed func(paused bool, at api.PauseMark)) {
	for {
		select {
		case g := <-s.beats:
			changed(g.Paused, g.PauseAt)
			s.acked <- struct{}{}
		case <-ctx.Done():
			return
		}
	}
}

func (s *reorderingSource) nextRenewal(t *testing.T) chan lease.Grant {
	t.Helper()
	select {
	case a := <-s.renewals:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("the lease was not renewed")
		return nil
	}
}

// Answers to concurrent calls arrive in any order: a renewal the coordinator answered before the
// operator's pause, delivered after a heartbeat that carried the pause, must not resume the edge
// (the simulator's seed 9393: the edge acted on a node 650 ms into the pause).
func TestEdge_AnOlderAnswerDoesNotLiftANewerPause(t *testing.T) {
	src := &reorderingSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), ttl: 3 * time.Second,
		renewals: make(chan chan lease.Grant), beats: make(chan lease.Grant), acked: make(chan struct{})}
	release := make(chan struct{})
	fl := newFlow(func(ctx context.Context, h hostflow.Host) hostflow.Result {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return hostflow.Result{Outcome: hostflow.Paused, Err: context.Canceled}
	})
	e, stop := run(t, edge.Options{Workers: 1, BatchSize: 1, Interval: time.Hour, LeaseMargin: 100 * time.Millisecond,
		Flow: fl, Mode: edge.Cluster(src), Finder: &finder{ids: []string{"a"}}})
	defer stop()
	defer close(release)

	// The renewal is made at ledger index 10, not paused; the operator's pause applies at 20 and
	// a heartbeat brings it before the renewal's answer arrives.
	first := src.nextRenewal(t)
	src.beats <- lease.Grant{Paused: true, PauseAt: api.PauseMark{Epoch: 1, AsOf: 20}}
	<-src.acked
	if !e.ClusterPaused() {
		t.Fatal("the heartbeat's pause was not taken")
	}
	first <- lease.Grant{Paused: false, PauseAt: api.PauseMark{Epoch: 1, AsOf: 10}}

	// The next renewal is sent only once the first answer was handled.
	second := src.nextRenewal(t)
	if !e.ClusterPaused() {
		t.Error("a renewal answered before the pause lifted it: the edge acts while the cluster is paused")
	}
	second <- lease.Grant{Paused: true, PauseAt: api.PauseMark{Epoch: 1, AsOf: 20}}

	// A newer answer still lifts it.
	src.beats <- lease.Grant{Paused: false, PauseAt: api.PauseMark{Epoch: 1, AsOf: 30}}
	<-src.acked
	if e.ClusterPaused() {
		t.Error("the resume at index 30 was not taken")
	}
}

// After a recover the log's indices start again below those the lost majority reached: an edge
// that heard "resumed" at a lost index takes the new history's pause at a lower index (its
// epoch is newer), drops a late answer of the lost history, and takes the new history's resume.
func TestEdge_APauseAfterARecoverIsTakenAtALowerIndex(t *testing.T) {
	src := &reorderingSource{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), ttl: time.Hour,
		renewals: make(chan chan lease.Grant), beats: make(chan lease.Grant), acked: make(chan struct{})}
	e, stop := run(t, edge.Options{Workers: 1, BatchSize: 1, Interval: time.Hour, LeaseMargin: 100 * time.Millisecond,
		Flow: newFlow(nil), Mode: edge.Cluster(src), Finder: &finder{}})
	defer stop()

	lost, recovered := uint64(1), uint64(1_800_000_000_000_000_000)
	beat := func(paused bool, at api.PauseMark) {
		t.Helper()
		src.beats <- lease.Grant{Paused: paused, PauseAt: at}
		<-src.acked
	}
	beat(false, api.PauseMark{Epoch: lost, AsOf: 500})
	beat(true, api.PauseMark{Epoch: recovered, AsOf: 460})
	if !e.ClusterPaused() {
		t.Fatal("the pause of the recovered cluster at index 460 was dropped after a resume at the lost index 500")
	}
	beat(false, api.PauseMark{Epoch: lost, AsOf: 510})
	if !e.ClusterPaused() {
		t.Fatal("a late answer of the lost history lifted the recovered cluster's pause")
	}
	beat(false, api.PauseMark{Epoch: recovered, AsOf: 470})
	if e.ClusterPaused() {
		t.Fatal("the recovered cluster's resume at index 470 was not taken")
	}
}
