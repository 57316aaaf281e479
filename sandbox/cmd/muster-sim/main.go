// SPDX-License-Identifier: Apache-2.0

// Command muster-sim runs the deterministic simulator of the lease protocol (sandbox/sim) over
// many seeds, or replays one seed with its trace.
//
//	muster-sim --seeds 2000            # seeds 1..2000 on every core; failing seeds are explained
//	muster-sim --seed 1234 --trace     # one seed, every event
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/sandbox/sim"
)

func main() {
	seeds := flag.Int("seeds", 2000, "number of seeds to run")
	first := flag.Uint64("first", 1, "first seed")
	seed := flag.Uint64("seed", 0, "replay only this seed, printing its trace")
	trace := flag.Bool("trace", false, "with --seed: every event, not only those about the violation")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "seeds run at once")
	explain := flag.Int("explain", 1, "failing seeds whose trace is printed")
	keepGoing := flag.Bool("keep-going", false, "run each seed to its end, recording the first violation of every invariant")
	profileName := flag.String("profile", "lan", "latency profile: lan, 3dc (members 20/40/80 ms apart, each edge next to one) or far-region (one edge 150 ms from every member)")
	protocol := flag.Int("protocol", 0, "every seed starts with its members announcing this cluster protocol and upgrades them one at a time to the newest (0: some seeds, from sim.OldestMixed or the previous protocol)")
	faults := flag.String("faults", "", "comma-separated fault kinds, the only ones each seed injects (default: each seed draws some of all): "+strings.Join(sim.FaultNames(), ","))
	wipedVotes := flag.Bool("wiped-votes", false, "the old rule: a member that lost its disk rejoins as the voter it was (the checker must catch it)")
	noHold := flag.Bool("no-recover-hold", false, "no hold of grants after a recover (the checker must catch it)")
	policies := flag.Bool("policies", false, "every seed runs with approval policies (default: 40% of the seeds)")
	dupAsFailure := flag.Bool("dup-as-failure", false, "edges report a second responder as a plain failure, as before the held queue (the checker must catch it)")
	flag.Parse()
	profile, err := sim.ParseProfile(*profileName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "muster-sim: --"+err.Error())
		os.Exit(2)
	}
	opts := sim.Options{KeepGoing: *keepGoing, Profile: profile, Protocol: *protocol, WipedVotes: *wipedVotes, NoRecoverHold: *noHold, Policies: *policies, DupAsFailure: *dupAsFailure}
	if *protocol < 0 || *protocol > ledger.Protocol {
		fmt.Fprintf(os.Stderr, "muster-sim: --protocol %d: this build applies cluster protocols 1 to %d\n", *protocol, ledger.Protocol)
		os.Exit(2)
	}
	if *faults != "" {
		opts.Faults = strings.Split(*faults, ",")
		for _, f := range opts.Faults {
			if !slices.Contains(sim.FaultNames(), f) {
				fmt.Fprintf(os.Stderr, "muster-sim: --faults: unknown fault kind %q (known: %s)\n", f, strings.Join(sim.FaultNames(), ","))
				os.Exit(2)
			}
		}
	}
	os.Exit(run(*seeds, *first, *seed, *trace, *workers, *explain, opts))
}

func run(seeds int, first, seed uint64, trace bool, workers, explain int, opts sim.Options) int {
	profile := opts.Profile
	if seed != 0 {
		opts.Seed = seed
		res, err := sim.Explain(os.Stdout, opts, trace)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if res.Violation != nil {
			return 1
		}
		fmt.Printf("seed %d: every invariant held\n", seed)
		return 0
	}
	sum := sim.Sweep(first, seeds, workers, opts)
	st := sum.Stats
	fmt.Printf("profile %s: ", profile)
	fmt.Printf("%d seeds (%d..%d) in %s on %d workers (%.0f seeds/s): %d events, %d log entries, %d grants, %d renewals, %d reports, %d acts, %d leader changes, %d late takeovers; %d member wipes, %d configuration changes, %d recovers, %d committed entries lost; %d holds, %d approvals\n",
		sum.Seeds, first, first+uint64(seeds)-1, sum.Elapsed.Round(1e6), workers, float64(sum.Seeds)/sum.Elapsed.Seconds(),
		st.Events, st.Entries, st.Grants, st.Renewals, st.Reports, st.Acts, st.LeaderChanges, st.LateTakeovers, st.Wipes, st.ConfChanges, st.Recovers, st.Lost, st.Holds, st.Approvals)
	for _, err := range sum.Errors {
		fmt.Fprintln(os.Stderr, "simulator error:", err)
	}
	for i, res := range sum.Failed {
		if i < explain {
			fmt.Println()
			o := opts
			o.Seed = res.Seed
			if _, err := sim.Explain(os.Stdout, o, false); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
	if len(sum.Failed) > 0 {
		names := make([]string, 0, len(sum.ByInvariant))
		for inv := range sum.ByInvariant {
			names = append(names, inv)
		}
		sort.Strings(names)
		fmt.Printf("\nseeds per broken invariant:\n")
		for _, inv := range names {
			s := sum.ByInvariant[inv]
			fmt.Printf("  %-18s %4d seeds, first %d: %v\n", inv, len(s), s[0], s[:min(len(s), 12)])
		}
		fmt.Printf("\n%d of %d seeds failed:\n", len(sum.Failed), sum.Seeds)
		for _, res := range sum.Failed {
			fmt.Printf("  seed %d: %v\n    replay: %s\n", res.Seed, res.Violation, sim.Replay(replay(opts, res.Seed)))
		}
	}
	switch {
	case len(sum.Errors) > 0:
		return 2
	case len(sum.Failed) > 0:
		return 1
	}
	fmt.Println("every invariant held on every seed")
	return 0
}

// replay is opts for seed.
func replay(opts sim.Options, seed uint64) sim.Options {
	opts.Seed = seed
	return opts
}
