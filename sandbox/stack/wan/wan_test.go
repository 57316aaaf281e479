// SPDX-License-Identifier: Apache-2.0

package wan

import (
	"testing"
	"time"
)

func TestProfiles_PlaceProcessesAsTheirNamesSay(t *testing.T) {
	for _, c := range []struct {
		p         Profile
		a, b      int
		roundTrip time.Duration
		what      string
	}{
		{ThreeDC, ThreeDC.MemberSite(0), ThreeDC.MemberSite(1), 20 * time.Millisecond, "members 1 and 2"},
		{ThreeDC, ThreeDC.MemberSite(0), ThreeDC.MemberSite(2), 40 * time.Millisecond, "members 1 and 3"},
		{ThreeDC, ThreeDC.MemberSite(1), ThreeDC.MemberSite(2), 80 * time.Millisecond, "members 2 and 3"},
		{ThreeDC, ThreeDC.EdgeSite(1), ThreeDC.MemberSite(1), 0, "an edge and the member next to it"},
		{FarRegion, FarRegion.EdgeSite(0), FarRegion.MemberSite(2), 150 * time.Millisecond, "the far edge and any member"},
		{FarRegion, FarRegion.EdgeSite(1), FarRegion.MemberSite(0), 0, "another edge and a member"},
		{LAN, LAN.EdgeSite(0), LAN.MemberSite(2), 0, "anything on lan"},
	} {
		if got := c.p.RoundTrip(c.a, c.b); got != c.roundTrip || c.p.RoundTrip(c.b, c.a) != got {
			t.Errorf("%s, %s: round trip %v, want %v both ways", c.p, c.what, got, c.roundTrip)
		}
	}
	if _, err := Parse("mars"); err == nil {
		t.Fatal("an unknown profile was accepted")
	}
}

// Members in three datacenters get the cluster guide's Raft settings, with their longest round
// trip; members in one place keep the defaults.
func TestProfiles_MemberEnvFollowsTheMembersRoundTrips(t *testing.T) {
	env := ThreeDC.MemberEnv()
	want := map[string]bool{"MUSTER_RAFT_ROUND_TRIP=80ms": true, "MUSTER_RAFT_HEARTBEAT_TIMEOUT=1s": true,
		"MUSTER_RAFT_ELECTION_TIMEOUT=1s": true, "MUSTER_RAFT_LEADER_LEASE_TIMEOUT=500ms": true}
	if len(env) != len(want) {
		t.Fatalf("3dc: %v, want %v", env, want)
	}
	for _, kv := range env {
		if !want[kv] {
			t.Errorf("3dc: unexpected %s", kv)
		}
	}
	for _, p := range []Profile{LAN, FarRegion} {
		if env := p.MemberEnv(); len(env) != 0 {
			t.Errorf("%s: %v, want none (its members are in one place)", p, env)
		}
	}
}
