// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/anishathalye/porcupine"
)

// Summary is a whole run, printed as a table.
type Summary struct {
	Seed   uint64
	Dir    string
	Rounds []*RoundResult
}

// Passed reports whether every round passed its checks.
func (s Summary) Passed() bool {
	for _, r := range s.Rounds {
		if !r.Check.OK() || r.TimedOut {
			return false
		}
	}
	return len(s.Rounds) > 0
}

// Stalls are every leader-SIGKILL stall of the run.
func (s Summary) Stalls() []time.Duration {
	var out []time.Duration
	for _, r := range s.Rounds {
		out = append(out, r.Stalls...)
	}
	return out
}

// LoneStalls are the stalls of rounds whose leader SIGKILL had no fault beside it that holds
// provisioning back by itself (an edge stopped, killed or cut off keeps its leased nodes until
// their leases expire; a broker or cluster restart, a pause, a leader partition stop all work):
// only there is the gap the failover's own.
func (s Summary) LoneStalls() []time.Duration {
	var out []time.Duration
	for _, r := range s.Rounds {
		lone := true
		for _, k := range r.Kinds {
			lone = lone && (k == LeaderKill || k == ClockStep)
		}
		if lone {
			out = append(out, r.Stalls...)
		}
	}
	return out
}

// Print writes the summary table.
func (s Summary) Print(w io.Writer) {
	faults := map[Kind]int{}
	nodes, double, lost, unack, staleActed, staleRefused, paused := 0, 0, 0, 0, 0, 0, 0
	var lin linTally
	var durs []time.Duration
	var total time.Duration
	for _, r := range s.Rounds {
		for _, e := range r.Events {
			faults[e.Kind]++
		}
		nodes += r.Nodes
		double = max(double, len(r.Check.DoubleProvisioned)) // the report covers the whole log
		lost += len(r.Check.Lost)
		unack += len(r.Check.Unacknowledged)
		staleActed += len(r.Check.Stale)
		staleRefused += r.Check.StaleRefused
		paused += len(r.Check.Paused)
		lin.add(r.Check.Lin)
		durs = append(durs, r.Done)
		total += r.Done
	}
	var fs []string
	for _, k := range knownKinds() {
		if faults[k] > 0 {
			fs = append(fs, fmt.Sprintf("%s %d", k, faults[k]))
		}
	}
	stalls := s.Stalls()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "== chaos summary (seed %d)\n", s.Seed)
	fmt.Fprintf(tw, "rounds\t%d\t(passed: %v)\n", len(s.Rounds), s.Passed())
	fmt.Fprintf(tw, "faults injected\t%s\n", strings.Join(fs, ", "))
	fmt.Fprintf(tw, "nodes provisioned\t%d\t(over all rounds)\n", nodes)
	fmt.Fprintf(tw, "double provisioned\t%d\t(must be 0)\n", double)
	fmt.Fprintf(tw, "lost results\t%d\t(must be 0)\n", lost)
	fmt.Fprintf(tw, "results never recorded\t%d\t(provisioned nodes whose result the ledger refused or never got; ledger disagrees with the fleet; must be 0)\n", unack)
	fmt.Fprintf(tw, "stale worker attempts\t%d refused, %d accepted\t(accepted must be 0)\n", staleRefused, staleActed)
	fmt.Fprintf(tw, "acted while paused\t%d\t(must be 0)\n", paused)
	fmt.Fprintf(tw, "edge call histories\t%s\t(porcupine; not linearizable must be 0, unknown is a timeout: not a pass)\n", lin)
	lone := s.LoneStalls()
	switch {
	case len(lone) > 0:
		fmt.Fprintf(tw, "stall after leader SIGKILL\tmedian %s, max %s\t(n=%d rounds where no other fault held provisioning back)\n", median(lone).Round(time.Millisecond), slices.Max(lone).Round(time.Millisecond), len(lone))
	case len(stalls) == 0:
		fmt.Fprintf(tw, "stall after leader SIGKILL\t-\t(no leader SIGKILL)\n")
	default:
		fmt.Fprintf(tw, "stall after leader SIGKILL\t-\t(every leader SIGKILL had another fault beside it)\n")
	}
	if len(stalls) > len(lone) {
		fmt.Fprintf(tw, "  with other faults beside it\tmedian %s, max %s\t(n=%d; the gap is then theirs too: a stopped edge keeps its leased nodes until the leases expire)\n",
			median(stalls).Round(time.Millisecond), slices.Max(stalls).Round(time.Millisecond), len(stalls))
	}
	if len(durs) > 0 {
		fmt.Fprintf(tw, "time to provision everything\tmedian %s, max %s per round, %s in all\n", median(durs).Round(time.Millisecond), slices.Max(durs).Round(time.Millisecond), total.Round(time.Millisecond))
	}
	fmt.Fprintf(tw, "\nround\tfaults\tnodes\ttime\tstall\thistory\tresult\n")
	for _, r := range s.Rounds {
		st := "-"
		if len(r.Stalls) > 0 {
			var p []string
			for _, d := range r.Stalls {
				p = append(p, d.Round(time.Millisecond).String())
			}
			st = strings.Join(p, ",")
		}
		result := "ok"
		if !r.Check.OK() || r.TimedOut {
			result = "FAILED"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Round, joinKinds(r.Kinds), r.Nodes, r.Done.Round(time.Millisecond), st, r.Check.Lin.Short(), result)
	}
	tw.Flush()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// linTally counts the rounds' linearizability results.
type linTally struct {
	ok, unknown, illegal, errs, ops int
	took                            time.Duration
}

func (t *linTally) add(l LinCheck) {
	switch {
	case l.Err != nil:
		t.errs++
	case l.Result == porcupine.Ok:
		t.ok++
	case l.Result == porcupine.Unknown:
		t.unknown++
	case l.Result == porcupine.Illegal:
		t.illegal++
	}
	t.ops += l.Ops
	t.took += l.Took
}

func (t linTally) String() string {
	s := fmt.Sprintf("%d linearizable, %d unknown, %d NOT linearizable (%d operations checked in %s)", t.ok, t.unknown, t.illegal, t.ops, t.took.Round(time.Millisecond))
	if t.errs > 0 {
		s += fmt.Sprintf(", %d not checked (history unreadable)", t.errs)
	}
	return s
}
