// SPDX-License-Identifier: Apache-2.0

// Package wan names the latency profiles that place Muster's processes in datacenters, for the
// simulator (sandbox/sim) and the chaos lab's proxies (sandbox/chaos) alike: where each member
// and each edge runs, and the round trip between two places.
package wan

import (
	"fmt"
	"time"
)

// Profile places members and edges in datacenters.
type Profile string

// The profiles: every process in one place; three members in three datacenters 20, 40 and 80 ms
// apart with each edge next to one member; one edge 150 ms from every member.
const (
	LAN       Profile = "lan"
	ThreeDC   Profile = "3dc"
	FarRegion Profile = "far-region"
)

// Parse reads a profile name; "" is lan.
func Parse(s string) (Profile, error) {
	switch p := Profile(s); p {
	case "", LAN:
		return LAN, nil
	case ThreeDC, FarRegion:
		return p, nil
	}
	return "", fmt.Errorf("profile %q: want %s, %s or %s", s, LAN, ThreeDC, FarRegion)
}

// farSite is where far-region puts its far edge.
const farSite = 3

// MemberSite is where member i (from 0) runs.
func (p Profile) MemberSite(i int) int {
	if p == ThreeDC {
		return i % 3
	}
	return 0
}

// EdgeSite is where edge j (from 0) runs: next to member j mod 3 on 3dc, the first edge far away
// on far-region.
func (p Profile) EdgeSite(j int) int {
	switch p {
	case ThreeDC:
		return j % 3
	case FarRegion:
		if j == 0 {
			return farSite
		}
	}
	return 0
}

// OneWay is the delay of one direction of the link between two places: half their round trip,
// and the most jitter that may add to it (a tenth of that half).
func (p Profile) OneWay(a, b int) (base, jitter time.Duration) {
	rtt := p.RoundTrip(a, b)
	return rtt / 2, rtt / 20
}

// RoundTrip is the round trip between two places, beyond the local network's.
func (p Profile) RoundTrip(a, b int) time.Duration {
	if a == b {
		return 0
	}
	switch p {
	case ThreeDC:
		switch a + b {
		case 1: // sites 0 and 1
			return 20 * time.Millisecond
		case 2: // 0 and 2
			return 40 * time.Millisecond
		default: // 1 and 2
			return 80 * time.Millisecond
		}
	case FarRegion:
		return 150 * time.Millisecond
	}
	return 0
}

// MemberEnv is the Raft settings docs/cluster.md gives for the profile's members, as the
// members' MUSTER_ environment: across datacenters the longest round trip between two members
// in raft.round_trip and raft's own 1 s timeouts, so a heartbeat in transit or a loaded member
// does not start an election (500 ms, the loopback values, flapped on 3dc under load); none
// where every member is in one place.
func (p Profile) MemberEnv() []string {
	longest := time.Duration(0)
	for a := range 3 {
		for b := range 3 {
			longest = max(longest, p.RoundTrip(p.MemberSite(a), p.MemberSite(b)))
		}
	}
	if longest == 0 {
		return nil
	}
	return []string{
		"MUSTER_RAFT_ROUND_TRIP=" + longest.String(),
		"MUSTER_RAFT_HEARTBEAT_TIMEOUT=1s",
		"MUSTER_RAFT_ELECTION_TIMEOUT=1s",
		"MUSTER_RAFT_LEADER_LEASE_TIMEOUT=500ms",
	}
}
