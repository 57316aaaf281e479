// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// failoverTimeout bounds each step of the failover check: the election, the pause reaching
// every edge, the resume reaching every edge.
const failoverTimeout = time.Minute

// failover kills the leader with SIGKILL, waits for a new leader whose ledger still holds what
// the summary counted, then pauses and resumes the cluster and waits for every edge to learn
// each: an edge learns the flag only from the leader, so this shows the edges followed it.
func (r *runner) failover(ctx context.Context, sum Summary) error {
	c := r.cluster
	v0, err := c.view(ctx)
	if err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	old := c.Member(v0.Leader)
	if old == nil {
		return fmt.Errorf("failover: no leader to kill (status names %q)", v0.Leader)
	}
	f := &Failover{Killed: old.ID, KilledPID: old.PID(), OldTerm: v0.Term}
	r.res.Failover = f
	r.say("\n== failover: kill -9 %d (%s, the leader in term %d)", f.KilledPID, f.Killed, f.OldTerm)
	killed := time.Now()
	if err := old.Kill(); err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	_, st, err := c.WaitLeader(wctx, len(c.Members()), old.ID)
	cancel()
	if err != nil {
		return fmt.Errorf("failover: no new leader after %s was killed: %w", old.ID, err)
	}
	// The new leader's own status: its ledger is caught up, so its counts are the ledger's.
	v1 := c.viewOf(st)
	f.NewLeader, f.NewTerm, f.Elected = v1.Leader, v1.Term, time.Since(killed)
	r.say("   new leader %s (pid %d) in term %d, %s after the kill", v1.Leader, v1.LeaderPID, v1.Term, f.Elected.Round(10*time.Millisecond))
	for _, rs := range sum.Regions {
		for _, st := range []api.NodeState{api.StateProvisioned, api.StateShutdown} {
			if got, want := v1.Regions[rs.Name][st], rs.Ledger[st]; got != want {
				return fmt.Errorf("failover: the new leader's ledger has %d %s nodes in %s, the summary %d", got, st, rs.Name, want)
			}
		}
	}
	r.say("   its ledger holds every node as the summary counted it")

	for _, step := range []struct {
		paused bool
		call   func(context.Context) (api.PauseResponse, error)
	}{
		{true, func(ctx context.Context) (api.PauseResponse, error) {
			return c.admin.Pause(ctx, api.PauseRequest{Reason: "make run: do the edges follow the new leader?"})
		}},
		{false, c.admin.Resume},
	} {
		if err := r.pauseStep(ctx, step.paused, step.call); err != nil {
			return fmt.Errorf("failover: %w", err)
		}
	}
	f.EdgesFollowed = true
	return nil
}

// pauseStep sets the pause flag through call and waits for every edge's
// choria_provisioner_paused to show it.
func (r *runner) pauseStep(ctx context.Context, paused bool, call func(context.Context) (api.PauseResponse, error)) error {
	what := map[bool]string{true: "pause", false: "resume"}[paused]
	cctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	if _, err := call(cctx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	began := time.Now()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for _, e := range r.edges {
		s := &scraper{url: e.Monitor + "/metrics", client: client}
		for {
			snap, err := s.scrape(cctx)
			if err == nil && snap.Paused == paused {
				break
			}
			select {
			case <-cctx.Done():
				return fmt.Errorf("edge %s did not learn the %s within %v (last error: %v)", e.region, what, failoverTimeout, err)
			case <-e.Exited():
				return fmt.Errorf("edge %s exited: %v (log: %s)", e.region, e.ExitErr(), logTail(e.LogPath))
			case <-tick.C:
			}
		}
	}
	r.say("   %s through the new leader: every edge shows choria_provisioner_paused %d within %s",
		what, map[bool]int{true: 1, false: 0}[paused], time.Since(began).Round(10*time.Millisecond))
	return nil
}
