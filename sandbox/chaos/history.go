// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/seed96588659/muster/edge/callhistory"
	"github.com/seed96588659/muster/pkg/api"
)

// never is the return time of a call that may take effect at any time after it was made.
const never = math.MaxInt64

// edgeCall is one call of an edge's recorded history, with the request and what came back.
type edgeCall struct {
	Edge string
	Kind api.CallKind
	// Call and Return are CLOCK_MONOTONIC readings; Return is never while no answer came, or
	// when the failure does not say whether the call took effect.
	Call, Return int64
	Wall         time.Time
	Answer       answerKind
	Code         api.Code
	Error        string

	Register *api.RegisterRequest
	Acquire  *api.AcquireRequest
	Renew    *api.RenewRequest
	Report   *api.ReportRequest
	Granted  *api.Lease // an acquire's lease, nil when none was granted
	Renewed  *api.Lease
	Reported *api.ReportResponse

	// Carried are the reports an acquire carried, each a report call of its own over the
	// acquire's interval, answered by the acquire's answer; CarriedBy is, on such a report,
	// the request id of the acquire that carried it.
	Carried   []*edgeCall
	CarriedBy string
}

// definite are the refusals that say the call changed nothing and why; any other failure
// (no leader, a timeout, a lost connection) leaves open whether it took effect.
func definite(c api.Code) bool {
	switch c {
	case api.CodeUnknownLease, api.CodeTokenMismatch, api.CodeLeaseExpired, api.CodeWrongEdge, api.CodeWrongRegion:
		return true
	}
	return false
}

// callLog gathers the edges' call histories as their files grow.
type callLog struct {
	offsets map[string]int64
	// open are the calls read without their return yet, by run and sequence.
	open  map[string]*edgeCall
	calls []*edgeCall
}

func newCallLog() *callLog {
	return &callLog{offsets: map[string]int64{}, open: map[string]*edgeCall{}}
}

// read takes in what the files gained since the last read.
func (l *callLog) read(paths []string) error {
	for _, p := range paths {
		recs, off, err := callhistory.ReadFrom(p, l.offsets[p])
		l.offsets[p] = off
		for _, rec := range recs {
			if e := l.take(rec); e != nil {
				return fmt.Errorf("%s: %w", p, e)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *callLog) take(rec callhistory.Record) error {
	key := fmt.Sprintf("%s/%d", rec.Run, rec.Seq)
	if rec.Phase == callhistory.PhaseCall {
		return l.takeCall(key, rec)
	}
	return l.takeReturn(key, rec)
}

// takeCall opens a call with its request.
func (l *callLog) takeCall(key string, rec callhistory.Record) error {
	c := &edgeCall{Edge: rec.Edge, Kind: rec.Kind, Call: rec.Mono, Return: never, Wall: rec.Wall, Answer: unknown}
	var err error
	switch rec.Kind {
	case api.CallRegister:
		c.Register, err = decode[api.RegisterRequest](rec.Request)
	case api.CallAcquire:
		c.Acquire, err = decode[api.AcquireRequest](rec.Request)
	case api.CallRenew:
		c.Renew, err = decode[api.RenewRequest](rec.Request)
	case api.CallReport:
		c.Report, err = decode[api.ReportRequest](rec.Request)
	default:
		return fmt.Errorf("call %s: unknown kind %q", key, rec.Kind)
	}
	if err != nil {
		return fmt.Errorf("call %s: request: %w", key, err)
	}
	l.open[key] = c
	l.calls = append(l.calls, c)
	if c.Acquire != nil {
		l.calls = append(l.calls, c.carry()...)
	}
	return nil
}

// carry makes each report acquire c carries a report call of its own: the ledger applies each
// as it would apply the report sent alone, anywhere in the acquire's interval, and the edge
// sends it alone under the same request id when the acquire's answer does not answer it.
func (c *edgeCall) carry() []*edgeCall {
	for i := range c.Acquire.Reports {
		c.Carried = append(c.Carried, &edgeCall{Edge: c.Edge, Kind: api.CallReport, Call: c.Call, Return: never, Wall: c.Wall, Answer: unknown,
			Report: &c.Acquire.Reports[i], CarriedBy: c.Acquire.RequestID})
	}
	return c.Carried
}

// takeReturn closes the call key with its answer or refusal.
func (l *callLog) takeReturn(key string, rec callhistory.Record) error {
	c := l.open[key]
	if c == nil {
		return fmt.Errorf("return %s of a call not recorded", key)
	}
	delete(l.open, key)
	if rec.Error != "" {
		// The reports an acquire carried stay unanswered: unknown, as a report call's.
		c.failed(rec.Code, rec.Error, rec.Mono)
		return nil
	}
	c.Answer, c.Return = answered, rec.Mono
	var err error
	switch c.Kind {
	case api.CallAcquire:
		var r *api.AcquireResponse
		if r, err = decode[api.AcquireResponse](rec.Response); err == nil {
			c.Granted = r.Lease
			c.answerCarried(r.Reports, rec.Mono)
		}
	case api.CallRenew:
		var r *api.RenewResponse
		if r, err = decode[api.RenewResponse](rec.Response); err == nil {
			c.Renewed = &r.Lease
		}
	case api.CallReport:
		c.Reported, err = decode[api.ReportResponse](rec.Response)
	}
	if err != nil {
		return fmt.Errorf("return %s: answer: %w", key, err)
	}
	return nil
}

// failed records a refusal or failure: a definite refusal came back at mono and changed nothing;
// any other failure leaves open whether the call took effect, at any time from the call on.
func (c *edgeCall) failed(code api.Code, msg string, mono int64) {
	c.Error, c.Code = msg, code
	if definite(code) {
		c.Answer, c.Return = refused, mono
	}
}

// answerCarried gives each report acquire c carried its answer from the acquire's, matched by
// position and request id as the edge matches them (lease.Coordinator); a report the answer
// does not answer stays unknown, and the edge sends it again alone.
func (c *edgeCall) answerCarried(answers []api.ReportAnswer, mono int64) {
	for i, rc := range c.Carried {
		if len(answers) != len(c.Carried) || answers[i].RequestID != rc.Report.RequestID {
			continue
		}
		if e := answers[i].Error; e != nil {
			rc.failed(e.Code, e.Error, mono)
			continue
		}
		rc.Answer, rc.Return, rc.Reported = answered, mono, &answers[i].ReportResponse
	}
}

// decode is data as a new T.
func decode[T any](data []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return v, nil
}

// window is the part of the history a round checks: every call that may have taken effect
// after from (the ledger read that starts the round). A call that never got an answer is
// counted only from after prev (the round before's read): it takes effect within a round or not
// at all, and kept for ever it would excuse every later round.
func (l *callLog) window(from, prev int64) []*edgeCall {
	var out []*edgeCall
	for _, c := range l.calls {
		if c.Call >= from || c.Return >= from && (c.Return != never || c.Call >= prev) {
			out = append(out, c)
		}
	}
	return out
}

// grantsSince are, by node, when the answers came to the acquires edge sent at or after from
// that granted it the node (this machine's wall clock): the leases the edge asked for after from,
// by its own record. Ledger times need an offset to compare with this machine's clock, and that
// offset moves at a change of leader (the new leader continues ledger time from the last stamp
// it applied), so the edge's record dates its grants better.
func (l *callLog) grantsSince(edge string, from time.Time) map[string][]time.Time {
	out := map[string][]time.Time{}
	if l == nil {
		return out
	}
	for _, c := range l.calls {
		if c.Kind != api.CallAcquire || c.Edge != edge || c.Granted == nil || c.Return == never || c.Wall.Before(from) {
			continue
		}
		answered := c.Wall.Add(time.Duration(c.Return - c.Call))
		for _, n := range c.Granted.Nodes {
			out[n] = append(out[n], answered)
		}
	}
	return out
}

// sentBefore are the request ids of the reports first sent before from. A retry of one in a
// round may be answered with the answer the ledger gave it before the round's read (a report is
// answered with its first answer, also across a change of leader), which the round's calls alone
// do not explain.
func (l *callLog) sentBefore(from int64) map[string]bool {
	ids := map[string]bool{}
	for _, c := range l.calls {
		if c.Call < from && c.Report != nil && c.Report.RequestID != "" {
			ids[c.Report.RequestID] = true
		}
	}
	return ids
}

// seedRead is the ledger's nodes as the runner read them between two clock readings.
type seedRead struct {
	Start, End int64
	Nodes      map[string]api.Node
}

// project turns a window's calls (and the ledger read that starts it) into porcupine's
// operations, one per call and node the call concerns; earlier are the report request ids sent
// before the window (callLog.sentBefore).
func project(calls []*edgeCall, seed *seedRead, earlier map[string]bool) []porcupine.Operation {
	p := projection{leaseNodes: leaseNodes(calls, seed), earlier: earlier}
	for _, c := range calls {
		switch c.Kind {
		case api.CallRegister:
			for _, n := range c.Register.Nodes {
				p.add(c, nodeCall{Kind: c.Kind, Edge: c.Register.Edge, Node: n.Identity}, nodeAnswer{})
			}
		case api.CallAcquire:
			p.acquire(c)
		case api.CallRenew:
			p.renew(c)
		case api.CallReport:
			p.report(c)
		}
	}
	if seed != nil {
		p.observe(seed)
	}
	laneByNode(p.ops)
	return p.ops
}

// leaseNodes are the nodes the window shows in each lease, by lease id: a renewal names a lease,
// not nodes, and concerns every node the window shows in it.
func leaseNodes(calls []*edgeCall, seed *seedRead) map[string]map[string]bool {
	byLease := map[string]map[string]bool{}
	addNodes := func(id string, nodes []string) {
		if byLease[id] == nil {
			byLease[id] = map[string]bool{}
		}
		for _, n := range nodes {
			byLease[id][n] = true
		}
	}
	for _, c := range calls {
		switch {
		case c.Granted != nil:
			addNodes(c.Granted.ID, c.Granted.Nodes)
		case c.Renewed != nil:
			addNodes(c.Renewed.ID, c.Renewed.Nodes)
		}
	}
	if seed != nil {
		for id, n := range seed.Nodes {
			if n.State == api.StateLeased && n.LeaseID != "" {
				addNodes(n.LeaseID, []string{id})
			}
		}
	}
	return byLease
}

// projection gathers the operations of one window.
type projection struct {
	leaseNodes map[string]map[string]bool
	earlier    map[string]bool
	ops        []porcupine.Operation
}

func (p *projection) add(c *edgeCall, in nodeCall, out nodeAnswer) {
	out.Kind, out.Code = c.Answer, c.Code
	p.ops = append(p.ops, porcupine.Operation{Input: in, Output: out, Call: c.Call, Return: c.Return, Metadata: c.describe()})
}

// acquire: only a grant names nodes; a grant whose answer was lost never reached the edge, which
// then never renews or reports it, so no answer the model checks depends on it.
func (p *projection) acquire(c *edgeCall) {
	if c.Granted == nil {
		return
	}
	g := leaseRef{ID: c.Granted.ID, Token: c.Granted.Token, Edge: c.Granted.Edge}
	for _, n := range c.Granted.Nodes {
		p.add(c, nodeCall{Kind: c.Kind, Edge: c.Acquire.Edge, Node: n}, nodeAnswer{Lease: g})
	}
}

// renew concerns every node the window shows in the lease, each listed or not by the answer.
func (p *projection) renew(c *edgeCall) {
	req := leaseRef{ID: c.Renew.LeaseID, Token: c.Renew.Token, Edge: c.Renew.Edge}
	var ans nodeAnswer
	listed := map[string]bool{}
	if c.Renewed != nil {
		ans.Lease = leaseRef{ID: c.Renewed.ID, Token: c.Renewed.Token, Edge: c.Renewed.Edge}
		for _, n := range c.Renewed.Nodes {
			listed[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(p.leaseNodes[req.ID])) {
		a := ans
		a.Listed = listed[n]
		p.add(c, nodeCall{Kind: c.Kind, Edge: req.Edge, Node: n, Lease: req}, a)
	}
}

// report concerns each node it carries a result of, applied, rejected or not mentioned.
func (p *projection) report(c *edgeCall) {
	req := leaseRef{ID: c.Report.LeaseID, Token: c.Report.Token, Edge: c.Report.Edge}
	applied, mentioned := map[string]bool{}, map[string]bool{}
	if c.Reported != nil {
		for _, n := range c.Reported.Applied {
			applied[n], mentioned[n] = true, true
		}
		for _, r := range c.Reported.Rejected {
			mentioned[r.Identity] = true
		}
	}
	done := map[string]bool{}
	for _, r := range c.Report.Results {
		if done[r.Identity] {
			continue
		}
		done[r.Identity] = true
		a := nodeAnswer{Applied: applied[r.Identity], Missing: c.Answer == answered && !mentioned[r.Identity]}
		p.add(c, nodeCall{Kind: c.Kind, Edge: req.Edge, Node: r.Identity, Lease: req, RequestID: c.Report.RequestID, Outcome: r.Outcome,
			Retry: p.earlier[c.Report.RequestID]}, a)
	}
}

// observe adds the ledger read that starts the window for every node a call names (a node
// nothing in the window names needs no check).
func (p *projection) observe(seed *seedRead) {
	named := map[string]bool{}
	for _, op := range p.ops {
		named[op.Input.(nodeCall).Node] = true
	}
	for _, id := range slices.Sorted(maps.Keys(seed.Nodes)) {
		n := seed.Nodes[id]
		if !named[id] {
			continue
		}
		seen := observed{State: n.State}
		if n.State == api.StateLeased {
			seen.Lease = leaseRef{ID: n.LeaseID, Token: n.LeaseToken, Edge: n.Edge}
		}
		p.ops = append(p.ops, porcupine.Operation{Input: nodeCall{Kind: kindObserve, Node: id}, Output: nodeAnswer{Seen: seen},
			Call: seed.Start, Return: seed.End, Metadata: "the chaos runner's read of the ledger before the round"})
	}
}

// laneByNode numbers each node's operations into lanes of calls that do not overlap in time
// (porcupine's ClientId), so the visualization draws concurrent calls apart.
func laneByNode(ops []porcupine.Operation) {
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if ops[a].Call != ops[b].Call {
			if ops[a].Call < ops[b].Call {
				return -1
			}
			return 1
		}
		return 0
	})
	busy := map[string][]int64{} // node -> each lane's last return
	for _, i := range idx {
		n := ops[i].Input.(nodeCall).Node
		lanes := busy[n]
		lane := slices.IndexFunc(lanes, func(until int64) bool { return until < ops[i].Call })
		if lane < 0 {
			lane = len(lanes)
			lanes = append(lanes, 0)
		}
		lanes[lane] = ops[i].Return
		busy[n] = lanes
		ops[i].ClientId = lane
	}
}

// describe is the call as the visualization shows it beside the model's description.
func (c *edgeCall) describe() string {
	s := fmt.Sprintf("%s %s sent %s", c.Edge, c.Kind, c.Wall.UTC().Format("15:04:05.000"))
	switch {
	case c.Acquire != nil:
		s += " request " + c.Acquire.RequestID
	case c.Report != nil:
		s += " request " + c.Report.RequestID
	}
	if c.CarriedBy != "" {
		s += " carried by acquire " + c.CarriedBy
	}
	if c.Error != "" {
		s += "; " + c.Error
	}
	return s
}
