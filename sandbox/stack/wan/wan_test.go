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
