// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"regexp"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

func TestDisplay_EachRegionsBarsShowItsOwnCounts(t *testing.T) {
	out := &testkit.LogBuffer{}
	d := newDisplay(out, false, []regionSize{{"eu", 30}, {"us", 40}}, time.Now())
	d.update(frame{
		snaps: map[string]Snapshot{
			"eu": {Discovered: 11, Outcomes: map[string]int64{"failed": 2}},
			"us": {Discovered: 21, Outcomes: map[string]int64{"failed": 3, "lock_held": 1}},
		},
		view: ClusterView{Leader: "c2", LeaderPID: 42, Term: 5, Members: 3, Regions: map[string]map[api.NodeState]int{
			"eu": {api.StateLeased: 12, api.StateProvisioned: 13, api.StateAbandoned: 1, api.StateGone: 2},
			"us": {api.StateLeased: 22, api.StateProvisioned: 23},
		}},
	})
	d.finish()
	text := out.String()
	for _, want := range []string{
		`eu discovered .* 11 / 30`, `eu leased .* 12 / 30`, `eu provisioned .* 13 / 30`, `eu failed .* 2 / 30`,
		`abandoned 1, gone 2;`,
		`us discovered .* 21 / 40`, `us leased .* 22 / 40`, `us provisioned .* 23 / 40`, `us failed .* 4 / 40`,
		`coordinators +leader c2 \(pid 42\), term 5, 3 members`,
	} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("display lacks %q:\n%s", want, text)
		}
	}
}
