// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// clusterReadyTimeout bounds the wait for a leader with every member in the configuration.
const clusterReadyTimeout = 90 * time.Second

// cluster is the run's coordinator members and an admin client for all of them.
type cluster struct {
	members []*memberProc
	admin   *api.Client
}

// ClusterView is what one admin status read says of the cluster.
type ClusterView struct {
	// Leader is the leader's member id ("" while there is none); LeaderPID its process here.
	Leader    string
	LeaderPID int
	// Term is the Raft term of the member that answered.
	Term uint64
	// Members is the Raft configuration's size.
	Members int
	// Paused is the replicated pause flag.
	Paused bool
	// Regions holds the ledger's node counts per region and state.
	Regions map[string]map[api.NodeState]int
}

// startCluster starts c1 (bootstrap), then c2 and c3 joining it, and waits for a leader of three.
func startCluster(ctx context.Context, s memberSpec, n int) (*cluster, error) {
	c := &cluster{}
	first, err := startMember(ctx, s, "c1", nil)
	if err != nil {
		return c, err
	}
	c.members = append(c.members, first)
	for i := 2; i <= n; i++ {
		m, err := startMember(ctx, s, fmt.Sprintf("c%d", i), []string{first.apiURL})
		if err != nil {
			return c, err
		}
		c.members = append(c.members, m)
	}
	c.admin, err = api.NewClient(c.urls(), api.WithToken(s.secrets.admin),
		api.WithHTTPClient(&http.Client{Timeout: 3 * time.Second}), api.WithAttempts(2*n))
	if err != nil {
		return c, fmt.Errorf("coordinator admin client: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, clusterReadyTimeout)
	defer cancel()
	_, err = c.waitView(wctx, func(v ClusterView) bool { return v.Leader != "" && v.Members == n })
	if err != nil {
		return c, fmt.Errorf("no leader of %d members: %w", n, err)
	}
	return c, nil
}

// urls are the members' API base URLs.
func (c *cluster) urls() []string {
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.apiURL
	}
	return out
}

// member returns the member with id, nil if none.
func (c *cluster) member(id string) *memberProc {
	for _, m := range c.members {
		if m.id == id {
			return m
		}
	}
	return nil
}

// view reads the cluster's status from the first member that answers.
func (c *cluster) view(ctx context.Context) (ClusterView, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := c.admin.Status(ctx)
	if err != nil {
		return ClusterView{}, fmt.Errorf("coordinator status: %w", err)
	}
	v := ClusterView{Leader: st.LeaderID, Term: st.Term, Members: len(st.Members), Paused: st.Paused, Regions: st.Regions}
	if m := c.member(st.LeaderID); m != nil && m.running() {
		v.LeaderPID = m.PID()
	} else if m != nil {
		// The answering member still names a leader this run has seen die.
		v.Leader, v.LeaderPID = "", 0
	}
	return v, nil
}

// waitView polls the status until cond holds or ctx ends; the error names the last view.
func (c *cluster) waitView(ctx context.Context, cond func(ClusterView) bool) (ClusterView, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last ClusterView
	var lastErr error
	for {
		v, err := c.view(ctx)
		if err == nil && cond(v) {
			return v, nil
		}
		if err == nil {
			last = v
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("%w (last view: leader %q term %d, %d members; last error: %v)", context.Cause(ctx), last.Leader, last.Term, last.Members, lastErr)
		case <-tick.C:
		}
	}
}

// stop ends every member still running (SIGTERM, then SIGKILL).
func (c *cluster) stop() error {
	var errs []error
	for _, m := range c.members {
		if err := m.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pids are the members' process ids.
func (c *cluster) pids() []int {
	out := make([]int, len(c.members))
	for i, m := range c.members {
		out[i] = m.PID()
	}
	return out
}
