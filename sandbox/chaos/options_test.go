// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"strings"
	"testing"
	"time"
)

// TestOptions_ValidateNamesTheField: a run starts from DefaultOptions; what a caller then sets
// wrong is refused naming the field, never replaced by a default.
func TestOptions_ValidateNamesTheField(t *testing.T) {
	valid := func() Options {
		o := DefaultOptions()
		o.Dir, o.Rounds = t.TempDir(), 1
		return o
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("DefaultOptions with a Dir and a round: %v", err)
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Dir = "" }, "Dir is required"},
		{func(o *Options) { o.Rounds = 0 }, "rounds 0"},
		{func(o *Options) { o.Emulated = 0 }, "Emulated is 0"},
		{func(o *Options) { o.Real = 1 }, "NodeBinary is required"},
		{func(o *Options) { o.LeaseTTL = 3 * time.Second }, "MaxWait is 2s"},
		{func(o *Options) { o.LeaseGrace = 0 }, "LeaseGrace is 0s"},
		{func(o *Options) { o.Kinds = nil }, "Kinds is empty"},
	} {
		o := valid()
		c.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// TestPlan_RollingUpgradeIsTheFirstSingleRoundAndTheRunStartsOnThePreviousBuild: a run that may
// draw rolling-upgrade starts on the previous build and leaves it in round 1; the new faults are
// drawn by default and member-downgrade only when named.
func TestPlan_RollingUpgradeIsTheFirstSingleRoundAndTheRunStartsOnThePreviousBuild(t *testing.T) {
	o := DefaultOptions()
	r := &Runner{opts: o}
	if got := r.plan(1); len(got) != 1 || got[0] != RollingUpgrade {
		t.Errorf("round 1 of a default run injects %v, want rolling-upgrade", got)
	}
	if got := r.plan(2); len(got) != 1 || got[0] != LeaderKill {
		t.Errorf("round 2 of a default run injects %v, want %s", got, LeaderKill)
	}
	if !r.startsOnPrevious() || !r.mayDraw(MemberWipe) || r.mayDraw(MemberDowngrade) {
		t.Errorf("default run: starts on previous %v, may draw member-wipe %v, member-downgrade %v; want true, true, false",
			r.startsOnPrevious(), r.mayDraw(MemberWipe), r.mayDraw(MemberDowngrade))
	}
	kinds, err := ParseKinds("member-wipe, rolling-upgrade,member-downgrade")
	if err != nil || len(kinds) != 3 {
		t.Fatalf("ParseKinds of the new faults: %v, %v", kinds, err)
	}
	r.opts.Kinds = kinds
	if got := r.plan(1); got[0] != RollingUpgrade {
		t.Errorf("round 1 of --faults %v injects %v, want rolling-upgrade", kinds, got)
	}
	// A plan with a drawn round may draw rolling-upgrade there, on this build: the run needs
	// the previous edge but starts on this build.
	r.opts.Kinds, r.opts.Plan = AllKinds, [][]Kind{{LeaderKill}, nil}
	if r.startsOnPrevious() || !r.mayDraw(RollingUpgrade) {
		t.Errorf("plan with a drawn round: starts on previous %v, may draw rolling-upgrade %v; want false, true", r.startsOnPrevious(), r.mayDraw(RollingUpgrade))
	}
	if _, err := ParseKinds("member-wipe,disk-fill"); err == nil || !strings.Contains(err.Error(), "member-downgrade") {
		t.Errorf("an unknown fault: %v, want an error listing the known ones", err)
	}
}
