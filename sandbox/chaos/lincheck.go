// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/seed96588659/muster/edge/callhistory"
)

// LinTimeout bounds porcupine's check of one round: past it the round's history is "unknown",
// neither passed nor failed.
const LinTimeout = 30 * time.Second

// maxShownNodes bounds the illegal nodes the evidence and the visualization show.
const maxShownNodes = 5

// LinCheck is the linearizability check of one round's edge call history.
type LinCheck struct {
	// Result is porcupine's: Ok, Illegal, or Unknown when the check ran out of time.
	Result porcupine.CheckResult
	// Calls are the edge calls of the round's window, Ops their operations per node (with the
	// ledger read), Nodes the nodes checked.
	Calls, Ops, Nodes int
	Took              time.Duration
	// Illegal are the nodes whose calls no order explains; Evidence shows the first of them.
	Illegal  []string
	Evidence []string
	// Visualization is porcupine's HTML of the illegal nodes' histories.
	Visualization string
	// Err is a history that could not be read or checked.
	Err error
}

// Failed reports whether the check found a history that is not linearizable, or could not run.
func (l LinCheck) Failed() bool { return l.Result == porcupine.Illegal || l.Err != nil }

// Short is the check in a few words, for the round table.
func (l LinCheck) Short() string {
	switch {
	case l.Err != nil:
		return "ERROR"
	case l.Result == "":
		return "-"
	case l.Result == porcupine.Illegal:
		return fmt.Sprintf("ILLEGAL (%d nodes)", len(l.Illegal))
	case l.Result == porcupine.Unknown:
		return fmt.Sprintf("unknown (timed out, %d ops)", l.Ops)
	}
	return fmt.Sprintf("ok %d ops %s", l.Ops, l.Took.Round(time.Millisecond))
}

// checkLinearizable runs porcupine over ops and, when they are not linearizable, writes the
// visualization of the illegal nodes to htmlPath.
func checkLinearizable(ops []porcupine.Operation, calls int, timeout time.Duration, htmlPath string) LinCheck {
	lc := LinCheck{Calls: calls, Ops: len(ops)}
	model := edgeModel()
	parts := model.Partition(ops)
	lc.Nodes = len(parts)
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	lc.Took, lc.Result = time.Since(start), res
	if res != porcupine.Illegal {
		return lc
	}
	partials := info.PartialLinearizations()
	var shown []porcupine.Operation
	for i, p := range parts {
		if slices.ContainsFunc(partials[i], func(lin []int) bool { return len(lin) == len(p) }) {
			continue
		}
		node := p[0].Input.(nodeCall).Node
		lc.Illegal = append(lc.Illegal, node)
		if len(lc.Illegal) <= maxShownNodes {
			shown = append(shown, p...)
			lc.Evidence = append(lc.Evidence, explain(node, p, partials[i]))
		}
	}
	// Only the illegal nodes: a round has hundreds of nodes, and their page is what to read.
	_, vinfo := porcupine.CheckOperationsVerbose(model, shown, timeout)
	if err := os.MkdirAll(filepath.Dir(htmlPath), 0o755); err != nil {
		lc.Err = fmt.Errorf("linearizability visualization: %w", err)
		return lc
	}
	if err := porcupine.VisualizePath(model, vinfo, htmlPath); err != nil {
		lc.Err = fmt.Errorf("linearizability visualization %s: %w", htmlPath, err)
		return lc
	}
	lc.Visualization = htmlPath
	return lc
}

// explain lists a node's calls in time order, marking those the longest linearization found
// could not place.
func explain(node string, ops []porcupine.Operation, partials [][]int) string {
	placed := map[int]bool{}
	for _, lin := range partials {
		if len(lin) > len(placed) {
			clear(placed)
			for _, i := range lin {
				placed[i] = true
			}
		}
	}
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ops[a].Call, ops[b].Call) })
	var b strings.Builder
	fmt.Fprintf(&b, "node %s: no order of its calls explains every answer (* could not be placed after the longest explained prefix):\n", node)
	base := ops[idx[0]].Call
	for _, i := range idx {
		op := ops[i]
		in, out := op.Input.(nodeCall), op.Output.(nodeAnswer)
		mark := " "
		if !placed[i] {
			mark = "*"
		}
		ret := "never"
		if op.Return != never {
			ret = "+" + time.Duration(op.Return-base).Round(time.Millisecond).String()
		}
		fmt.Fprintf(&b, "   %s [+%s, %s] %s -> %s  (%v)\n", mark, time.Duration(op.Call-base).Round(time.Millisecond), ret, in, out.describe(in), op.Metadata)
	}
	return b.String()
}

// readSeed reads the ledger's nodes between two readings of the edges' clock: the state the
// round's history starts from.
func (r *Runner) readSeed(ctx context.Context) *seedRead {
	s := &seedRead{Start: callhistory.Monotonic()}
	nodes, err := r.ledgerNodes(ctx)
	s.End = callhistory.Monotonic()
	if err == nil {
		s.Nodes = nodes
	}
	return s
}

// historyPaths are the edges' call history files.
func (r *Runner) historyPaths() []string {
	var paths []string
	for _, e := range r.edges {
		paths = append(paths, e.CallHistory)
	}
	return paths
}

// readCalls takes in what the edges' call histories gained.
func (r *Runner) readCalls() error {
	if err := r.calls.read(r.historyPaths()); err != nil {
		return fmt.Errorf("edge call histories: %w", err)
	}
	return nil
}

// checkHistory checks the round's edge calls (read by readCalls before the round's checks), from the ledger read that started it, with porcupine.
func (r *Runner) checkHistory(res *RoundResult, seed *seedRead, readErr error) LinCheck {
	if readErr != nil {
		return LinCheck{Err: readErr}
	}
	win := r.calls.window(seed.Start, r.prevSeed)
	r.prevSeed = seed.Start
	if len(win) == 0 {
		// Every round registers and leases nodes: an empty history is a recorder that is off.
		return LinCheck{Err: fmt.Errorf("no edge call recorded in round %d (call_history in %v)", res.Round, r.historyPaths())}
	}
	html := filepath.Join(r.opts.Dir, "rounds", strconv.Itoa(res.Round), "linearizability.html")
	return checkLinearizable(project(win, seed, r.calls.sentBefore(seed.Start)), len(win), LinTimeout, html)
}
