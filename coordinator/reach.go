// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// What status says of reaching the other members and of the quorum, as this member sees it:
// the probes of their APIs (probeRoundTrips, every RoundTripInterval) and Raft's contact with
// the leader. A member is reachable while its last probe answered and one answered within
// reachableProbes intervals (a probe of a silent host takes its whole timeout to fail).
const reachableProbes = 3

// reach fills m's Reachable and LastContact for a member other than this one.
func (s *Service) reach(m *api.Member, leaderID string) {
	if m.ID == leaderID {
		s.noteLeaderContact()
	}
	c, ok := s.rtt.contactOf(m.ID)
	if !ok {
		return
	}
	now := s.clock.Monotonic()
	if c.probed {
		reachable := c.lastOK && now-c.answered <= reachableProbes*s.cfg.RoundTripInterval
		// A follower hears from its leader over Raft more often than it probes it.
		if m.ID == leaderID && !s.node.IsLeader() && now-c.answered <= 2*s.node.ElectionTimeout() {
			reachable = true
		}
		m.Reachable = &reachable
	}
	if c.ever {
		d := api.Duration(max(now-c.answered, 0))
		m.LastContact = &d
	}
}

// noteLeaderContact records when Raft last heard from the leader this member follows.
func (s *Service) noteLeaderContact() {
	_, id := s.node.Leader()
	if id == "" || id == s.cfg.ID {
		return
	}
	if lc := s.node.LastContact(); !lc.IsZero() {
		s.rtt.heard(id, s.clock.Monotonic()-time.Since(lc))
	}
}

// quorum says whether the cluster can commit as this member sees it: it leads (Raft steps a
// leader down that no longer hears from a majority), or it follows a leader it knows (a
// follower that stops hearing from its leader becomes a candidate and forgets it). Without one it
// says why, counting the voters this member reaches.
func (s *Service) quorum(resp *api.StatusResponse) {
	ok := resp.LeaderID != ""
	resp.Quorum = &ok
	if ok {
		return
	}
	voters, reached := 0, []string{}
	for _, m := range resp.Members {
		if !m.Voter {
			continue
		}
		voters++
		if m.ID == s.cfg.ID || m.Reachable != nil && *m.Reachable {
			reached = append(reached, m.ID)
		}
	}
	resp.NoQuorum = fmt.Sprintf("member %s is %s and knows no leader: it reaches %d of %d voters (%s) and a leader needs %d; the cluster cannot commit until a majority of voters is up and in touch (docs/cluster.md: status; recover after losing a majority for good)",
		s.cfg.ID, resp.State, len(reached), voters, strings.Join(reached, ", "), voters/2+1)
}
