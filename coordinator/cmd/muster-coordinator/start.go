// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/config"
	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
)

// How a member starts, once it serves its API (Consul's bootstrap_expect, etcd's initial cluster):
//   - with Raft state and join targets, it asks the targets which cluster they are in, and refuses
//     to start when one names another cluster than its data directory does;
//   - without Raft state and with bootstrap_expect N, it asks its join targets for their status
//     until it knows what to do: join, as a learner, when any of them is in a cluster; bootstrap
//     a cluster of the N members when it has heard from all N (itself included) and none is in
//     one; wait, never bootstrapping alone, while it hears from fewer;
//   - then it joins through its targets (joinCluster) unless it needs nothing more.

// starter is the part of a member the start drives (coordinator.Service).
type starter interface {
	joiner
	ID() string
	RaftAddress() string
	HasRaftState() (bool, error)
	ClusterID() (string, error)
	BootstrapWith([]raftnode.Peer) error
}

// statusAskTimeout bounds one target's answer to a start's question.
const statusAskTimeout = 3 * time.Second

// expectInterval is how often a member waiting to bootstrap asks its targets again.
const expectInterval = time.Second

// startMember takes the member from open to running: it returns an error only when the member
// must not run (another cluster's data directory, a bad join or bootstrap_expect setting).
func startMember(ctx context.Context, core starter, cfg config.Config, hc *http.Client, logger *slog.Logger) error {
	has, err := core.HasRaftState()
	if err != nil {
		return err
	}
	if has && len(cfg.Join) > 0 {
		if err := checkTargetsCluster(ctx, core, cfg, hc, logger); err != nil {
			return err
		}
	}
	if !has && cfg.BootstrapExpect > 0 {
		bootstrapped, err := bootstrapExpect(ctx, core, cfg, hc, logger)
		if err != nil || ctx.Err() != nil {
			return err
		}
		if bootstrapped {
			return announce(ctx, core, cfg, hc, logger)
		}
	}
	if len(cfg.Join) == 0 {
		return nil
	}
	return joinCluster(ctx, core, cfg, hc, logger)
}

// askTargets reads every join target's status at once, one try each.
func askTargets(ctx context.Context, cfg config.Config, hc *http.Client) []targetAnswer {
	out := make([]targetAnswer, len(cfg.Join))
	var wg sync.WaitGroup
	for i, target := range cfg.Join {
		out[i].target = target
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := api.NewClient([]string{target}, api.WithToken(cfg.Auth.AdminToken), api.WithHTTPClient(hc), api.WithAttempts(1))
			if err != nil {
				out[i].err = err
				return
			}
			actx, cancel := context.WithTimeout(ctx, statusAskTimeout)
			defer cancel()
			out[i].st, out[i].err = c.StatusOf(actx, target)
		}()
	}
	wg.Wait()
	return out
}

// targetAnswer is one join target's status, or why it gave none.
type targetAnswer struct {
	target string
	st     api.StatusResponse
	err    error
}

// checkTargetsCluster refuses a member whose data directory names a cluster when a join target
// answers from another: its own configuration holds it, so it would never ask that cluster's
// leader to join (and be refused there). Targets that do not answer, or name no cluster, pass.
func checkTargetsCluster(ctx context.Context, core starter, cfg config.Config, hc *http.Client, logger *slog.Logger) error {
	own, err := core.ClusterID()
	if err != nil || own == "" {
		return err
	}
	for _, a := range askTargets(ctx, cfg, hc) {
		switch {
		case a.err != nil:
			logger.Debug("join target did not say which cluster it is in", "target", a.target, "error", a.err)
		case a.st.ID != core.ID() && a.st.ClusterID != "" && a.st.ClusterID != own:
			return fmt.Errorf("member %s: %w: its data directory %s belongs to cluster %s and join target %s (member %s) is in cluster %s; "+
				"start it with an empty data directory to join cluster %s, or with join targets of cluster %s",
				core.ID(), coordinator.ErrOtherCluster, cfg.DataDir, own, a.target, a.st.ID, a.st.ClusterID, a.st.ClusterID, own)
		}
	}
	return nil
}

// bootstrapExpect waits until this member, without Raft state, either bootstraps a cluster of
// cfg.BootstrapExpect members or finds one to join (bootstrapped false), or ctx ends.
func bootstrapExpect(ctx context.Context, core starter, cfg config.Config, hc *http.Client, logger *slog.Logger) (bootstrapped bool, err error) {
	self := raftnode.Peer{ID: core.ID(), Address: core.RaftAddress()}
	var seen string
	for {
		// A leader that bootstrapped with this member may have replicated to it meanwhile.
		if has, err := core.HasRaftState(); err != nil || has {
			return false, err
		}
		v := expectView(self, cfg.BootstrapExpect, askTargets(ctx, cfg, hc))
		switch {
		case v.err != nil:
			return false, v.err
		case v.cluster != "":
			logger.Info("a join target is in a cluster: joining it as a learner, not bootstrapping", "target", v.cluster)
			return false, nil
		case v.peers != nil:
			logger.Info("bootstrapping a new cluster: every expected member answered without Raft state", "voters", peerList(v.peers))
			err := core.BootstrapWith(v.peers)
			if errors.Is(err, raftnode.ErrHasState) {
				logger.Info("a leader reached this member before its bootstrap: joining instead")
				return false, nil
			}
			return err == nil, err
		}
		if s := v.String(); s != seen {
			// Once per change of what it sees, not every round.
			logger.Info("waiting for members to bootstrap with", "expect", cfg.BootstrapExpect, "heard", len(v.heard), "members", peerList(v.heard), "silent", strings.Join(v.silent, ","))
			seen = s
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-time.After(expectInterval):
		}
	}
}

// announce records a bootstrapped member's API address with the leader, as a join does (the
// configuration holds the member already, so the leader only records it): the leader asks every
// member for its protocol there, and names the cluster once the protocol is raised.
func announce(ctx context.Context, core starter, cfg config.Config, hc *http.Client, logger *slog.Logger) error {
	c, err := api.NewClient(cfg.Join, api.WithToken(cfg.Auth.AdminToken), api.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	const first, most = 250 * time.Millisecond, 5 * time.Second
	for delay := first; ; delay = min(2*delay, most) {
		req, err := core.JoinRequest()
		if err == nil {
			jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err = c.Join(jctx, req)
			cancel()
		}
		if err == nil {
			logger.Info("API address recorded with the leader", "via", c.Leader())
			return nil
		}
		if api.IsCode(err, api.CodeOtherCluster) {
			return err
		}
		// Until the new cluster has elected its first leader.
		logger.Debug("record API address; retrying", "error", err, "in", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

// expectDecision is what one round of answers says: join (cluster names why), bootstrap with
// peers, refuse (err), or wait (heard, silent).
type expectDecision struct {
	cluster string
	peers   []raftnode.Peer
	err     error
	heard   []raftnode.Peer
	silent  []string
}

func (d expectDecision) String() string {
	return peerList(d.heard) + " / " + strings.Join(d.silent, ",")
}

// expectView decides on one round of answers. A target is in a cluster when it knows a leader,
// has applied an entry or names a cluster, or holds a configuration that is not the one this
// member would bootstrap: a member that bootstrapped the same n members and has nothing more
// in its log is one this member bootstraps beside, not one it joins (joining it would leave that
// member with no voter to elect it).
func expectView(self raftnode.Peer, n int, answers []targetAnswer) expectDecision {
	var d expectDecision
	byID := map[string]raftnode.Peer{self.ID: self}
	var bootstrapped []api.StatusResponse
	for _, a := range answers {
		st := a.st
		switch {
		case a.err != nil:
			d.silent = append(d.silent, a.target)
			continue
		case st.ID == self.ID:
			continue // this member, through its own address
		case st.LeaderID != "" || st.AppliedIndex > 0 || st.ClusterID != "" || st.LastIndex > 1:
			d.cluster = fmt.Sprintf("%s (member %s, leader %q, cluster %q, applied %d)", a.target, st.ID, st.LeaderID, st.ClusterID, st.AppliedIndex)
			return d
		case st.RaftAddress == "":
			// A build that does not say its Raft address cannot be bootstrapped with.
			d.silent = append(d.silent, a.target+" (no raft address in its status: upgrade it)")
			continue
		case len(st.Members) > 0:
			bootstrapped = append(bootstrapped, st)
		}
		p := raftnode.Peer{ID: st.ID, Address: st.RaftAddress}
		if q, ok := byID[p.ID]; ok && q != p {
			d.err = fmt.Errorf("%s: members answer as %s at two Raft addresses, %s and %s; every member needs its own %s", config.KeyBootstrapExpect, p.ID, q.Address, p.Address, config.KeyNodeID)
			return d
		}
		byID[p.ID] = p
	}
	for _, p := range byID {
		d.heard = append(d.heard, p)
	}
	slices.SortFunc(d.heard, func(a, b raftnode.Peer) int { return cmp.Compare(a.ID, b.ID) })
	switch {
	case len(d.heard) > n:
		d.err = fmt.Errorf("%s: %d, but %d members answered without Raft state (%s): %s must name the %d members of the new cluster and no others",
			config.KeyBootstrapExpect, n, len(d.heard), peerList(d.heard), config.KeyJoin, n)
		return d
	case len(d.heard) < n:
		return d
	}
	for _, st := range bootstrapped {
		var conf []raftnode.Peer
		for _, m := range st.Members {
			if m.Voter {
				conf = append(conf, raftnode.Peer{ID: m.ID, Address: m.RaftAddress})
			}
		}
		slices.SortFunc(conf, func(a, b raftnode.Peer) int { return cmp.Compare(a.ID, b.ID) })
		if !slices.Equal(conf, d.heard) || len(conf) != len(st.Members) {
			d.cluster = fmt.Sprintf("member %s (bootstrapped with %s, not %s)", st.ID, peerList(conf), peerList(d.heard))
			return d
		}
	}
	d.peers = d.heard
	return d
}

// peerList is peers as id@address, comma-separated.
func peerList(peers []raftnode.Peer) string {
	s := make([]string, len(peers))
	for i, p := range peers {
		s[i] = p.ID + "@" + p.Address
	}
	return strings.Join(s, ",")
}
