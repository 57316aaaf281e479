// SPDX-License-Identifier: Apache-2.0

package coordproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Timings of WaitLeader's polls.
const (
	leaderPoll     = 100 * time.Millisecond
	statusReadWait = 3 * time.Second
)

// WaitLeader waits until a running member other than not says it leads want voters and its
// /readyz answers 200 (its leadership established, its ledger caught up), and returns that
// member with its own status. It gives up when ctx ends or after Spec.LeaderTimeout.
func (c *Cluster) WaitLeader(ctx context.Context, want int, not string) (*Member, api.StatusResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.spec.LeaderTimeout)
	defer cancel()
	hc := &http.Client{Timeout: statusReadWait}
	tick := time.NewTicker(leaderPoll)
	defer tick.Stop()
	for {
		var last []string
		for _, m := range c.members {
			if m.ID == not {
				continue
			}
			st, why := c.leads(ctx, hc, m, want)
			if why == "" {
				return m, st, nil
			}
			last = append(last, m.ID+": "+why)
		}
		select {
		case <-ctx.Done():
			return nil, api.StatusResponse{}, fmt.Errorf("no ready leader (not %q) of %d members within %s: %w (last: %s)",
				not, want, c.spec.LeaderTimeout, context.Cause(ctx), strings.Join(last, "; "))
		case <-tick.C:
		}
	}
}

// leads reads m's own status and says why m is not yet a ready leader of want voters, "" when
// it is. Voters, not members: a member that joined without Raft state is a non-voter until it
// has caught up, and a cluster whose other members are not voters yet loses its quorum with its
// leader.
func (c *Cluster) leads(ctx context.Context, hc *http.Client, m *Member, want int) (api.StatusResponse, string) {
	if !m.Running() {
		return api.StatusResponse{}, "not running"
	}
	sctx, cancel := context.WithTimeout(ctx, statusReadWait)
	defer cancel()
	st, err := c.status.StatusOf(sctx, m.API)
	switch {
	case err != nil:
		return st, "status: " + err.Error()
	case st.State != "Leader" || st.LeaderID != m.ID:
		return st, fmt.Sprintf("%s, leader %q", st.State, st.LeaderID)
	case voters(st) != want:
		return st, fmt.Sprintf("leads %d members, %d of them voters", len(st.Members), voters(st))
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, m.API+"/readyz", nil)
	if err != nil {
		return st, "readyz request: " + err.Error()
	}
	res, err := hc.Do(req)
	if err != nil {
		return st, "leads, readyz: " + err.Error()
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 200))
		return st, fmt.Sprintf("leads, readyz %s: %s", res.Status, strings.TrimSpace(string(body)))
	}
	return st, ""
}

// voters counts the voters of the configuration st names.
func voters(st api.StatusResponse) int {
	n := 0
	for _, m := range st.Members {
		if m.Voter {
			n++
		}
	}
	return n
}
