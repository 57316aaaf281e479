// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/internal/testcluster"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// heldAsk holds the first protocol question a member sends once armed, until released or until
// the question gives up, so a test acts while a leader's answers are on their way.
type heldAsk struct {
	armed   atomic.Bool
	asked   chan string
	release chan struct{}
}

func newHeldAsk() *heldAsk {
	return &heldAsk{asked: make(chan string, 1), release: make(chan struct{})}
}

func (h *heldAsk) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == api.PathStatus && h.armed.CompareAndSwap(true, false) {
		h.asked <- r.URL.Host
		select {
		case <-h.release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestCluster_JoinDuringTheProtocolRaiseCannotBePassed: the leader asks every member for its
// protocol and proposes the lowest answer; a member of the previous build that joins while those
// answers are on their way must not end up in a cluster raised above what it applies. Either the
// join waits for the raise and is refused, or the raise counts the newcomer.
func TestCluster_JoinDuringTheProtocolRaiseCannotBePassed(t *testing.T) {
	older := ledger.Protocol - 1
	c := testcluster.New(t, 3, testcluster.WithAPI(nil))
	c.Logs = &testkit.LogBuffer{}
	ask := newHeldAsk()
	c.MemberClient = &http.Client{Transport: ask}
	c1, c2, c3 := c.Members[0], c.Members[1], c.Members[2]
	// c1 of the previous build bootstraps the cluster, which then runs its protocol; c2 of this
	// build joins; c3 of the previous build waits to join.
	c.Announce = map[string]int{c1.ID: older, c3.ID: older}
	c.Start(c1, true)
	c.WaitLeader()
	c.Start(c2, false)
	c.Admit(c2)
	c.Start(c3, false)
	c.WaitConverged(c1, c2)
	if v := clusterProtocolOf(t, c1); v != older {
		t.Fatalf("cluster bootstrapped by a member of protocol %d runs %d", older, v)
	}

	// c1 is upgraded; the leader's next question is held on its way.
	ask.armed.Store(true)
	c.Stop(c1)
	delete(c.Announce, c1.ID)
	c.Start(c1, false)
	select {
	case <-ask.asked:
	case <-time.After(testcluster.WaitLimit):
		t.Fatal("the leader never asked a member for its protocol")
	}
	leader := c.WaitLeader()

	joined := make(chan error, 1)
	go func() {
		_, err := leader.Svc.Join(context.Background(), api.JoinRequest{ID: c3.ID, RaftAddress: c3.Svc.RaftAddress(), APIAddress: c3.URL, Protocol: older})
		joined <- err
	}()
	var err error
	select {
	case err = <-joined:
	case <-time.After(testcluster.WaitLimit):
		t.Fatal("the join never returned")
	}
	close(ask.release)

	if err != nil {
		// The join waited for the raise and met the raised protocol.
		if !errors.Is(err, ledger.ErrClusterProtocol) {
			t.Fatalf("join of c3 during the raise: %v", err)
		}
		return
	}
	// c3 is a member: the leader must count its answer before raising anything.
	testkit.WaitFor(t, testcluster.WaitLimit, "the leader to decide with c3 a member", func() bool {
		if l, svc := c.Leader(); l != nil {
			if v, err := svc.ClusterProtocol(); err == nil && v > older {
				return true
			}
		}
		return strings.Contains(c.Logs.String(), fmt.Sprintf(`c3=%d"`, older))
	})
	for _, m := range c.Running() {
		if v := clusterProtocolOf(t, m); v > older {
			t.Fatalf("%s runs cluster protocol %d while c3, which applies up to %d, is a member", m.ID, v, older)
		}
	}
}

// TestCluster_JoinBelowTheOldestProtocolIsRefused: a leader of this build lets in no member of a
// build older than ledger.OldestProtocol, even while the cluster runs below it, and says which
// build to upgrade to; a member of the oldest protocol joins.
func TestCluster_JoinBelowTheOldestProtocolIsRefused(t *testing.T) {
	c := testcluster.New(t, 2)
	c1, c2 := c.Members[0], c.Members[1]
	// The cluster runs protocol 1 while c1 says it applies no more.
	c.Announce = map[string]int{c1.ID: 1}
	c.Start(c1, true)
	c.WaitLeader()
	c.Start(c2, false)
	join := func(protocol int) error {
		return refusedOnLeader(c, "join c2", func(l *testcluster.Member) error {
			_, err := l.Svc.Join(context.Background(), api.JoinRequest{ID: c2.ID, RaftAddress: c2.Svc.RaftAddress(), APIAddress: c2.URL, Protocol: protocol})
			return err
		})
	}
	err := join(ledger.OldestProtocol - 1)
	want := fmt.Sprintf("it applies cluster protocol up to %d and this muster-coordinator runs beside members from protocol %d on; upgrade it to a build of protocol %d first",
		ledger.OldestProtocol-1, ledger.OldestProtocol, ledger.OldestProtocol)
	if !errors.Is(err, ledger.ErrClusterProtocol) || !strings.Contains(err.Error(), want) {
		t.Fatalf("join announcing protocol %d: %v, want it refused with %q", ledger.OldestProtocol-1, err, want)
	}
	if st, err := c.WaitLeader().Svc.Status(context.Background()); err != nil || len(st.Members) != 1 {
		t.Fatalf("members after a refused join: %+v %v", st.Members, err)
	}
	if err := join(ledger.OldestProtocol); err != nil {
		t.Fatalf("join announcing the oldest protocol %d: %v", ledger.OldestProtocol, err)
	}
}
