// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"time"

	"github.com/seed96588659/muster/sandbox/stack/wan"
)

// Profile places the processes in datacenters (sandbox/stack/wan, as the chaos lab does). A
// message between two places takes half their round trip on top of the local latency
// (network.latency), and a commit waits for the round trip from the leader to the nearest other
// member, a quorum of three. On lan (the default) everything is one place and a seed runs
// exactly as before profiles existed.
type Profile = wan.Profile

// ParseProfile reads a profile name; "" is lan.
func ParseProfile(s string) (Profile, error) { return wan.Parse(s) }

// site is where process id runs: members first, then the edges, then the operator.
func (s *Sim) site(id int) int {
	nm := len(s.members)
	switch {
	case id < nm:
		return s.opts.Profile.MemberSite(id)
	case id-nm < len(s.edges):
		return s.opts.Profile.EdgeSite(id - nm)
	}
	return 0
}

// wanDelay is the one-way delay between the places of processes a and b, jitter drawn.
func (s *Sim) wanDelay(a, b int) time.Duration {
	base, jitter := s.opts.Profile.OneWay(s.site(a), s.site(b))
	if base == 0 {
		return 0
	}
	return base + s.between(0, jitter)
}

// quorumDelay is the round trip a commit by leader m waits for: to the nearest other member.
func (s *Sim) quorumDelay(m *member) time.Duration {
	var least time.Duration = -1
	for _, o := range s.members {
		if o == m {
			continue
		}
		if d := s.opts.Profile.RoundTrip(s.site(m.id), s.site(o.id)); least < 0 || d < least {
			least = d
		}
	}
	return max(least, 0)
}
