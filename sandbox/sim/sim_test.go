// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"flag"
	"os"
	"testing"
)

var (
	flagSeeds = flag.Int("sim.seeds", 20, "seeds TestSim runs")
	flagFirst = flag.Uint64("sim.first", 1, "first seed TestSim runs")
	flagSeed  = flag.Uint64("sim.seed", 0, "run only this seed and print its trace")
	flagTrace = flag.Bool("sim.trace", false, "with -sim.seed, print every event, not only those about the violation")
	flagProf  = flag.String("sim.profile", "", "latency profile: lan (default), 3dc or far-region")
)

// TestSim runs seeds of the lease protocol simulation (20, or 5 with -short: make sim runs
// thousands without -race); a failing seed names the command that replays it with its trace.
func TestSim(t *testing.T) {
	if *flagSeed != 0 {
		res, err := Explain(os.Stdout, Options{Seed: *flagSeed, Profile: Profile(*flagProf)}, *flagTrace)
		if err != nil {
			t.Fatal(err)
		}
		if res.Violation != nil {
			t.Fatalf("seed %d: %v", *flagSeed, res.Violation)
		}
		return
	}
	n := *flagSeeds
	if testing.Short() {
		n = min(n, 5)
	}
	sum := Sweep(*flagFirst, n, 0, Options{Profile: Profile(*flagProf)})
	for _, err := range sum.Errors {
		t.Error(err)
	}
	for _, res := range sum.Failed {
		t.Errorf("seed %d: %v\nreplay: %s", res.Seed, res.Violation, Replay(Options{Seed: res.Seed, Profile: Profile(*flagProf)}))
	}
	t.Logf("%d seeds in %s: %d events, %d entries, %d grants, %d renewals, %d reports (%d answered in an acquire's answer), %d acts, %d leader changes",
		sum.Seeds, sum.Elapsed, sum.Stats.Events, sum.Stats.Entries, sum.Stats.Grants, sum.Stats.Renewals, sum.Stats.Reports, sum.Stats.Carried, sum.Stats.Acts, sum.Stats.LeaderChanges)
}

// TestSim_Deterministic: a seed replays to the same trace, which is what makes a failing
// seed's replay command worth printing.
func TestSim_Deterministic(t *testing.T) {
	for _, seed := range []uint64{3, 99} {
		a, err := Run(Options{Seed: seed, Trace: true, KeepGoing: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(Options{Seed: seed, Trace: true, KeepGoing: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Trace) != len(b.Trace) || a.Stats != b.Stats {
			t.Fatalf("seed %d: %d trace lines and %+v, then %d and %+v", seed, len(a.Trace), a.Stats, len(b.Trace), b.Stats)
		}
		for i := range a.Trace {
			if a.Trace[i].At != b.Trace[i].At || a.Trace[i].Text != b.Trace[i].Text {
				t.Fatalf("seed %d differs at line %d:\n%s %s\n%s %s", seed, i, fmtTime(a.Trace[i].At), a.Trace[i].Text, fmtTime(b.Trace[i].At), b.Trace[i].Text)
			}
		}
	}
}
