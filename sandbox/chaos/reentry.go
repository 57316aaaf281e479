// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/emulated"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
)

// Re-entry faults: how many emulated nodes a node-rebuilt or node-flapping fault takes (a
// share of the round's, at least 1), and how often a flapping one comes back.
const (
	reentryShare = 0.01
	reentryMax   = 6
	flapTimes    = 2
)

// armed is one node a re-entry fault took.
type armed struct {
	fleet *emulated.Fleet
	id    string
	times int
}

// reenterNodes gives a share of the round's emulated nodes not yet configured the fleet's
// rebuilt fault (back once as a new machine) or flapping fault (back after each of its next
// flapTimes provisionings), then waits until each came back that often: the round's final wait
// then sees them provisioned again. They come back ReprovisionAfter plus a second after their
// provisioning, so the coordinators queue them again rather than take them for a discovery
// racing the restart (lease.reprovision_after).
func (in *injector) reenterNodes(ctx context.Context, ev *Event, rng *rand.Rand) {
	r := in.r
	re := faults.Reentry{After: r.opts.ReprovisionAfter + time.Second, Times: 1}
	fault := faults.Fault{Rebuilt: &re}
	if ev.Kind == NodeFlapping {
		re.Times = flapTimes
		fault = faults.Fault{Flapping: &re}
	}
	var cands []armed
	total := 0
	for _, reg := range r.lab.Regions() {
		fl := reg.Fleet()
		for _, id := range reg.EmulatedNodes() {
			total++
			if st, ok := fl.State(id); ok && st.Mode == "provisioning" && st.Config["plugin.choria.server.provision"] == "true" {
				cands = append(cands, armed{fleet: fl, id: id, times: re.Times})
			}
		}
	}
	n := min(max(1, int(float64(total)*reentryShare)), reentryMax, len(cands))
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	picked := cands[:n]
	ev.Start = time.Now()
	ev.Reentries = map[string]int{}
	var ids []string
	for _, a := range picked {
		if err := a.fleet.Reenter(a.id, fault); err != nil {
			ev.Err = err
			return
		}
		ev.Reentries[a.id] = a.times
		ids = append(ids, a.id)
	}
	ev.Target = fmt.Sprintf("%d nodes", len(ids))
	if len(ids) == 0 {
		ev.Target, ev.Detail = "no node", "every node was configured already"
		return
	}
	ev.Detail = fmt.Sprintf("%s, back %d time(s) each %s after their provisioning", strings.Join(ids, " "), re.Times, re.After)
	ev.Err = waitFor(ctx, "the "+string(ev.Kind)+" nodes back in provisioning mode", r.opts.RoundTimeout, func() (bool, string) {
		for _, a := range picked {
			if st, _ := a.fleet.State(a.id); st.Reentries < a.times {
				return false, fmt.Sprintf("%s came back %d of %d times (mode %s)", a.id, st.Reentries, a.times, st.Mode)
			}
		}
		return true, ""
	})
}
