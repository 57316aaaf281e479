// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"time"
)

// Profile places the processes in datacenters. A message between two places takes half their
// round trip on top of the local latency (network.latency), and a commit waits for the round
// trip from the leader to the nearest other member, a quorum of three. On lan (the default)
// everything is one place and a seed runs exactly as before profiles existed.
type Profile string

// The profiles the chaos lab offers too (issue 18): every member in one place; three members in
// three datacenters 20, 40 and 80 ms apart with each edge next to one member; one edge 150 ms
// from every member.
const (
	ProfileLAN       Profile = "lan"
	Profile3DC       Profile = "3dc"
	ProfileFarRegion Profile = "far-region"
)

// ParseProfile reads a profile name; "" is lan.
func ParseProfile(s string) (Profile, error) {
	switch p := Profile(s); p {
	case "", ProfileLAN:
		return ProfileLAN, nil
	case Profile3DC, ProfileFarRegion:
		return p, nil
	}
	return "", fmt.Errorf("profile %q: want %s, %s or %s", s, ProfileLAN, Profile3DC, ProfileFarRegion)
}

// farSite is where far-region puts its far edge.
const farSite = 3

// site is where process id runs: members are 0..2, then the edges, then the operator.
func (s *Sim) site(id int) int {
	nm := len(s.members)
	switch s.opts.Profile {
	case Profile3DC:
		if id < nm {
			return id
		}
		if e := id - nm; e < len(s.edges) {
			return e % nm
		}
	case ProfileFarRegion:
		if id == nm {
			return farSite // the first edge
		}
	}
	return 0
}

// roundTrip is the round trip between two sites, beyond the local latency.
func (p Profile) roundTrip(a, b int) time.Duration {
	if a == b {
		return 0
	}
	switch p {
	case Profile3DC:
		switch {
		case a+b == 1: // sites 0 and 1
			return 20 * time.Millisecond
		case a+b == 2: // 0 and 2
			return 40 * time.Millisecond
		default: // 1 and 2
			return 80 * time.Millisecond
		}
	case ProfileFarRegion:
		return 150 * time.Millisecond
	}
	return 0
}

// wanDelay is the one-way delay between the places of processes a and b, with up to 10% jitter.
func (s *Sim) wanDelay(a, b int) time.Duration {
	rtt := s.opts.Profile.roundTrip(s.site(a), s.site(b))
	if rtt == 0 {
		return 0
	}
	return rtt/2 + s.between(0, rtt/20)
}

// quorumDelay is the round trip a commit by leader m waits for: to the nearest other member.
func (s *Sim) quorumDelay(m *member) time.Duration {
	var least time.Duration = -1
	for _, o := range s.members {
		if o == m {
			continue
		}
		if d := s.opts.Profile.roundTrip(s.site(m.id), s.site(o.id)); least < 0 || d < least {
			least = d
		}
	}
	return max(least, 0)
}
