// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

// clusterReadyTimeout bounds the wait for a leader with every member in the configuration.
const clusterReadyTimeout = 90 * time.Second

// cluster is the run's coordinator members and an admin client for all of them.
type cluster struct {
	*coordproc.Cluster
	admin *api.Client
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

// startCluster starts c1 (bootstrap), then the others joining it, and waits for a leader of
// all of them.
func startCluster(ctx context.Context, spec coordproc.Spec) (*cluster, error) {
	procs, err := coordproc.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	c := &cluster{Cluster: procs}
	c.admin, err = api.NewClient(c.URLs(), api.WithToken(spec.Auth.AdminToken),
		api.WithHTTPClient(&http.Client{Timeout: 3 * time.Second}), api.WithAttempts(2*spec.Size))
	if err != nil {
		return nil, fmt.Errorf("coordinator admin client: %w (stop: %v)", err, procs.Stop())
	}
	return c, nil
}

// view reads the cluster's status from the first member that answers.
func (c *cluster) view(ctx context.Context) (ClusterView, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := c.admin.Status(ctx)
	if err != nil {
		return ClusterView{}, fmt.Errorf("coordinator status: %w", err)
	}
	return c.viewOf(st), nil
}

// viewOf is the view one member's status gives.
func (c *cluster) viewOf(st api.StatusResponse) ClusterView {
	v := ClusterView{Leader: st.LeaderID, Term: st.Term, Members: len(st.Members), Paused: st.Paused, Regions: st.Regions}
	if m := c.Member(st.LeaderID); m != nil && m.Running() {
		v.LeaderPID = m.PID()
	} else if m != nil {
		// The answering member still names a leader this run has seen die.
		v.Leader, v.LeaderPID = "", 0
	}
	return v
}

// pids are the members' process ids.
func (c *cluster) pids() []int {
	var out []int
	for _, m := range c.Members() {
		out = append(out, m.PID())
	}
	return out
}
