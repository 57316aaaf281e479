// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/sandbox/stack/wan"
)

// Summary is what a sweep over many seeds found.
type Summary struct {
	Seeds int
	// ByInvariant counts, per invariant, the seeds that broke it (with KeepGoing, every
	// invariant a seed broke; else its first).
	ByInvariant map[string][]uint64
	Failed      []Result // seed order
	Errors      []error  // the simulator itself failed on these seeds
	Stats       Stats
	Elapsed     time.Duration
}

// Sweep runs seeds first..first+n-1 on workers goroutines (GOMAXPROCS when 0), without traces,
// each with the options of base.
func Sweep(first uint64, n, workers int, base Options) Summary {
	keepGoing := base.KeepGoing
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	start := time.Now()
	seeds := make(chan uint64)
	var mu sync.Mutex
	sum := Summary{Seeds: n, ByInvariant: map[string][]uint64{}}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				o := base
				o.Seed, o.Trace = seed, false
				res, err := Run(o)
				mu.Lock()
				switch {
				case err != nil:
					sum.Errors = append(sum.Errors, err)
				case res.Violation != nil:
					sum.Failed = append(sum.Failed, res)
				}
				vs := res.Violations
				if !keepGoing && res.Violation != nil {
					vs = []*Violation{res.Violation}
				}
				for _, v := range vs {
					sum.ByInvariant[v.Invariant] = append(sum.ByInvariant[v.Invariant], seed)
				}
				sum.Stats.add(res.Stats)
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		seeds <- first + uint64(i)
	}
	close(seeds)
	wg.Wait()
	sort.Slice(sum.Failed, func(i, j int) bool { return sum.Failed[i].Seed < sum.Failed[j].Seed })
	for _, seeds := range sum.ByInvariant {
		slices.Sort(seeds)
	}
	sum.Elapsed = time.Since(start)
	return sum
}

func (s *Stats) add(o Stats) {
	s.Events += o.Events
	s.Entries += o.Entries
	s.Grants += o.Grants
	s.Renewals += o.Renewals
	s.Reports += o.Reports
	s.Acts += o.Acts
	s.LeaderChanges += o.LeaderChanges
	s.LateTakeovers += o.LateTakeovers
	s.Carried += o.Carried
	s.Wipes += o.Wipes
	s.ConfChanges += o.ConfChanges
	s.Lost += o.Lost
	s.Recovers += o.Recovers
	s.Holds += o.Holds
	s.Approvals += o.Approvals
}

// Replay is the command that runs seed o.Seed again, with o's options, and its whole trace.
func Replay(o Options) string {
	cmd := fmt.Sprintf("cd sandbox && go run ./cmd/muster-sim --seed %d", o.Seed)
	if o.Profile != "" && o.Profile != wan.LAN {
		cmd += " --profile " + string(o.Profile)
	}
	if o.Protocol != 0 {
		cmd += fmt.Sprintf(" --protocol %d", o.Protocol)
	}
	if o.Faults != nil {
		cmd += " --faults " + strings.Join(o.Faults, ",")
	}
	if o.WipedVotes {
		cmd += " --wiped-votes"
	}
	if o.NoRecoverHold {
		cmd += " --no-recover-hold"
	}
	if o.Policies {
		cmd += " --policies"
	}
	if o.DupAsFailure {
		cmd += " --dup-as-failure"
	}
	return cmd + " --trace"
}

// Explain runs seed again with its trace and writes the violation, the events about its
// subjects (or every event, with full) and the replay command.
func Explain(w io.Writer, o Options, full bool) (Result, error) {
	o.Trace = true
	seed := o.Seed
	res, err := Run(o)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(w, "seed %d: faults %v; %d events, %d entries, %d grants, %d acts, %d leader changes\n", seed, res.Faults,
		res.Stats.Events, res.Stats.Entries, res.Stats.Grants, res.Stats.Acts, res.Stats.LeaderChanges)
	var focus []string
	if res.Violation != nil {
		fmt.Fprintf(w, "VIOLATION %v\n", res.Violation)
		if !full && len(res.Violation.Subjects) > 0 {
			focus = res.Violation.Subjects
			fmt.Fprintf(w, "trace (cluster events and those about %v; --trace shows every event):\n", focus)
		}
	}
	if err := WriteTrace(w, res.Trace, focus); err != nil {
		return res, err
	}
	for _, v := range res.Violations[min(1, len(res.Violations)):] {
		fmt.Fprintf(w, "also VIOLATION %v\n", v)
	}
	if res.Violation != nil {
		fmt.Fprintf(w, "VIOLATION %v\nreplay: %s\n", res.Violation, Replay(o))
	}
	return res, nil
}
