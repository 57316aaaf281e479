// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/seed96588659/muster/pkg/api"
)

// The sequential specification of the edge API, seen from one node: what the answers of
// register, acquire, renew and report may say about it, given the ledger's rules
// (coordinator/ledger/DESIGN.md), in whatever order the calls took effect. Porcupine checks that
// some order consistent with real time explains every answer (linearizability). Every edge call
// is one Raft command applied in log order, so such an order must exist.
//
// Only what edge calls show is modelled, and every step the ledger takes on its own is a
// nondeterministic choice: a lease may expire before any call (its nodes go back to waiting
// and it may record a late result), a register may or may not requeue a finished node (the
// reprovision guard and fences are timing the model does not know), an operator's retry may
// make a deferred, gone or abandoned node eligible. Timing (lock windows, backoffs, TTLs) is
// not checked at all. The model is partitioned by node: each call is projected onto every node
// it names, and each node's calls are checked on their own.

// kindObserve is a reading of the node's ledger record by the chaos runner (the admin API),
// checked like a call: it pins the state a round starts from.
const kindObserve api.CallKind = "observe"

// leaseRef names one lease: its id and fencing token, with the edge that holds it.
type leaseRef struct {
	ID    string
	Token uint64
	Edge  string
}

func (l leaseRef) none() bool { return l.ID == "" }

// is reports whether l and o are the same lease (id and token; the edge is the lease's).
func (l leaseRef) is(o leaseRef) bool { return l.ID == o.ID && l.Token == o.Token }

func (l leaseRef) String() string {
	if l.none() {
		return "-"
	}
	return fmt.Sprintf("%s/%d(%s)", shortID(l.ID), l.Token, l.Edge)
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// nodeCall is one edge call as it concerns one node: porcupine's input.
type nodeCall struct {
	Kind api.CallKind
	Edge string
	Node string
	// Lease is the lease a renew or report names (with the calling edge).
	Lease leaseRef
	// RequestID and Outcome are a report's request id and its result for the node.
	RequestID string
	Outcome   api.Outcome
	// Retry says a report's request id was first sent before the history checked: the ledger
	// may have applied it then, and answers it as it did then whatever happened since.
	Retry bool
	// Desc names the call in the visualization (request ids, wall times).
	Desc string
}

// answerKind is how a call came back.
type answerKind int

const (
	// answered: the coordinator applied the call and answered.
	answered answerKind = iota
	// refused: the coordinator refused the call for a reason that changes nothing (Code).
	refused
	// unknown: no answer, or a failure that does not say whether the call took effect (a
	// timeout, a lost connection, an edge killed while waiting); it may take effect later.
	unknown
)

// nodeAnswer is what came back from a call, as it concerns one node: porcupine's output.
type nodeAnswer struct {
	Kind answerKind
	Code api.Code
	// Lease is the lease an acquire granted the node under, or the lease a renew answered.
	Lease leaseRef
	// Listed says a renew's answer lists the node among the lease's nodes.
	Listed bool
	// Applied says a report's answer lists the node's result as applied; Missing that it lists
	// it neither applied nor rejected.
	Applied, Missing bool
	// Seen is the ledger's record of the node (observe).
	Seen observed
}

// observed is the part of a node's ledger record the model knows.
type observed struct {
	State api.NodeState
	Lease leaseRef
}

// pastLease is a lease that held the node and let go of it. Expired: by its expiry, which
// removes the whole lease, so it is never renewed again. Late: it let go by its expiry without
// reporting the node and no provisioned/shutdown came since, so it may still record a late one.
type pastLease struct {
	Lease   leaseRef
	Expired bool
	Late    bool
}

// reportMemo is a report the ledger applied and keeps the answer of: a retry with the same
// request id gets the same answer.
type reportMemo struct {
	Lease     leaseRef
	RequestID string
	Applied   bool
}

// nodeState is what the model knows of one node. Its slices are never changed once the state
// is built: a step copies them (porcupine keeps old states).
type nodeState struct {
	// Known is false until an answer says where the node is: before that every answer about it
	// is legal (its history began before the calls checked).
	Known bool
	// Holder is the live lease holding the node, none when the node is not leased.
	Holder leaseRef
	// Final: provisioned or shut down, offered again only after a register requeued it.
	Final bool
	// Fence is the live lease a late result took the node out of: until it expires its edge may
	// still count the node held, so no register requeues the node (ledger fences, protocol 3).
	Fence leaseRef
	// Floor is the highest token the node was granted under: a later grant's token is higher.
	Floor uint64
	// LateBelow: leases the model never saw with a token below it may still hold a late
	// right (they may have held the node before its calls were recorded). 0: none.
	LateBelow uint64
	// Past are the leases seen holding the node that let go of it, by token.
	Past []pastLease
	// Reports are the applied reports of the node, by lease id and request id.
	Reports []reportMemo
}

func lateOutcome(o api.Outcome) bool { return o == api.OutcomeProvisioned || o == api.OutcomeShutdown }

// step is every state the node may be in after the call, empty when no state explains the answer.
func (s nodeState) step(c nodeCall, a nodeAnswer) []nodeState {
	var out []nodeState
	for _, from := range s.expiries() {
		out = append(out, from.apply(c, a)...)
	}
	return out
}

// expiries are s and s after the lease holding or fencing the node expired: the leader
// expires leases on its own, so that may have happened before any call.
func (s nodeState) expiries() []nodeState {
	out := []nodeState{s}
	if !s.Known {
		return out
	}
	if !s.Holder.none() {
		e := s.letGo(s.Holder, true)
		e.Holder = leaseRef{}
		out = append(out, e)
	}
	if !s.Fence.none() {
		for _, t := range out {
			e := t.letGo(t.Fence, true)
			e.Fence = leaseRef{}
			out = append(out, e)
		}
	}
	return out
}

func (s nodeState) apply(c nodeCall, a nodeAnswer) []nodeState {
	switch c.Kind {
	case kindObserve:
		return s.observe(a.Seen)
	case api.CallRegister:
		return s.register()
	case api.CallAcquire:
		return s.acquire(c, a)
	case api.CallRenew:
		return s.renew(c, a)
	case api.CallReport:
		return s.report(c, a)
	}
	return nil
}

// observe: an unknown node takes the ledger's record as its state; a known one must match it.
func (s nodeState) observe(o observed) []nodeState {
	if !s.Known {
		t := s
		t.Known = true
		switch o.State {
		case api.StateLeased:
			t.Holder, t.Floor, t.LateBelow = o.Lease, o.Lease.Token, o.Lease.Token
		case api.StateProvisioned, api.StateShutdown:
			t.Final = true
		default:
			t.LateBelow = math.MaxUint64
		}
		return []nodeState{t}
	}
	var ok bool
	switch o.State {
	case api.StateLeased:
		ok = s.Holder.is(o.Lease)
	case api.StateProvisioned, api.StateShutdown:
		ok = s.Holder.none() && s.Final
	default:
		ok = s.Holder.none() && !s.Final
	}
	if !ok {
		return nil
	}
	return []nodeState{s}
}

// register may requeue a finished node no lease fences; it never touches a leased one.
func (s nodeState) register() []nodeState {
	if !s.Final || !s.Fence.none() {
		return []nodeState{s}
	}
	t := s
	t.Final = false
	return []nodeState{s, t}
}

// acquire: a grant takes a node that no live lease holds and that is not finished, under a
// token above every earlier grant of it. A retry's answer (the same lease) changes nothing.
func (s nodeState) acquire(c nodeCall, a nodeAnswer) []nodeState {
	g := a.Lease
	if g.Edge != c.Edge {
		return nil
	}
	if !s.Known {
		t := s
		t.Known, t.Holder, t.Floor, t.LateBelow = true, g, g.Token, g.Token
		return []nodeState{t}
	}
	if s.Holder.is(g) {
		return []nodeState{s}
	}
	if !s.Holder.none() || s.Final || g.Token <= s.Floor {
		return nil
	}
	t := s
	t.Holder, t.Floor = g, g.Token
	t.LateBelow = min(t.LateBelow, g.Token)
	return []nodeState{t}
}

// renew: an answer lists the node exactly when the lease still holds it; unknown_lease and
// token_mismatch say no lease of that id (and token) exists. lease_expired says nothing about
// the node: the lease may exist until the leader expires it, and a new leader extends it.
func (s nodeState) renew(c nodeCall, a nodeAnswer) []nodeState {
	l := c.Lease
	switch a.Kind {
	case unknown:
		return []nodeState{s}
	case refused:
		if s.Known && (a.Code == api.CodeUnknownLease && s.Holder.ID == l.ID || a.Code == api.CodeTokenMismatch && s.Holder.is(l)) {
			return nil
		}
		return []nodeState{s}
	}
	if !a.Lease.is(l) {
		return nil
	}
	if !s.Known {
		if !a.Listed {
			return []nodeState{s}
		}
		t := s
		t.Known, t.Holder, t.Floor, t.LateBelow = true, a.Lease, l.Token, l.Token
		return []nodeState{t}
	}
	if a.Listed != s.Holder.is(l) || s.expired(l) {
		return nil
	}
	return []nodeState{s}
}

// expired reports whether lease l is known to have expired (it no longer exists).
func (s nodeState) expired(l leaseRef) bool {
	for _, p := range s.Past {
		if p.Lease.is(l) {
			return p.Expired
		}
	}
	return false
}

// report: a result under the lease holding the node is applied; a late provisioned/shutdown of
// a lease that let go of the node by expiry may be applied (and takes the node out of any lease
// holding it now); every other result is rejected. A report applied before is answered as it
// was, whatever happened since.
func (s nodeState) report(c nodeCall, a nodeAnswer) []nodeState {
	l := c.Lease
	if m, ok := s.memo(l.ID, c.RequestID); ok {
		switch {
		case a.Kind == unknown:
			return []nodeState{s}
		case !m.Lease.is(l) || m.Lease.Edge != l.Edge:
			// The ledger answers a retry only to the same lease token and edge.
			if a.Kind == refused && (a.Code == api.CodeTokenMismatch || a.Code == api.CodeWrongEdge) {
				return []nodeState{s}
			}
			return nil
		case a.Kind == answered && !a.Missing && a.Applied == m.Applied:
			return []nodeState{s}
		}
		return nil
	}
	outs := s.results(l, c.Outcome)
	switch a.Kind {
	case unknown:
		res := []nodeState{s}
		for _, o := range outs {
			res = append(res, o.next.remember(l, c.RequestID, o.applied))
		}
		return res
	case answered:
		if a.Missing {
			return nil
		}
		var res []nodeState
		for _, o := range outs {
			if o.applied == a.Applied {
				res = append(res, o.next.remember(l, c.RequestID, o.applied))
			}
		}
		if c.Retry {
			// The first answer of an application the history does not show: nothing changes.
			res = append(res, s.remember(l, c.RequestID, a.Applied))
		}
		return res
	}
	// A refusal applied nothing: every result had to be refusable.
	if s.Known && (a.Code == api.CodeUnknownLease && s.Holder.ID == l.ID || a.Code == api.CodeTokenMismatch && s.Holder.is(l)) {
		return nil
	}
	return []nodeState{s}
}

// result is one way a node's result may be answered, and the state it leaves.
type result struct {
	applied bool
	next    nodeState
}

// results are the ways a result of lease l with outcome o may be answered.
func (s nodeState) results(l leaseRef, o api.Outcome) []result {
	switch {
	case !s.Known:
		// Applied or not, under the lease holding it or late: either way the answer teaches
		// where the node is now when it was applied.
		t := s.settle(l, o)
		t.Known = true
		if !t.Final {
			t.LateBelow = l.Token
		}
		t.Floor = max(t.Floor, l.Token)
		return []result{{false, s}, {true, t}}
	case s.Holder.is(l) && s.Holder.Edge == l.Edge:
		return []result{{true, s.settle(l, o)}}
	case s.Holder.is(l):
		return nil // another edge's lease: the whole report is refused (wrong_edge)
	case lateOutcome(o) && s.lateRight(l):
		return []result{{false, s}, {true, s.settle(l, o)}}
	}
	return []result{{false, s}}
}

// settle is the node after lease l's result o was applied: out of every lease (a live lease
// a late result takes it out of fences it until it expires); finished by a provisioned/shutdown,
// which ends every earlier lease's late right.
func (s nodeState) settle(l leaseRef, o api.Outcome) nodeState {
	t := s
	if !t.Holder.none() && !t.Holder.is(l) {
		t = t.letGo(t.Holder, false)
		t.Fence = t.Holder
	}
	t.Holder = leaseRef{}
	t = t.letGo(l, false)
	t.Final = lateOutcome(o)
	if t.Final {
		t.LateBelow = 0
		past := make([]pastLease, len(t.Past))
		for i, p := range t.Past {
			past[i] = pastLease{Lease: p.Lease, Expired: p.Expired}
		}
		t.Past = past
	}
	return t
}

// lateRight reports whether lease l may still record a late result for the node.
func (s nodeState) lateRight(l leaseRef) bool {
	for _, p := range s.Past {
		if p.Lease.is(l) {
			return p.Late && p.Lease.Edge == l.Edge
		}
	}
	return l.Token < s.LateBelow
}

// letGo records that lease l no longer holds the node (expired: by its expiry).
func (s nodeState) letGo(l leaseRef, expired bool) nodeState {
	past := make([]pastLease, 0, len(s.Past)+1)
	for _, p := range s.Past {
		if p.Lease.is(l) {
			expired = expired || p.Expired
			continue
		}
		past = append(past, p)
	}
	past = append(past, pastLease{Lease: l, Expired: expired, Late: expired && !s.Final})
	slices.SortFunc(past, func(a, b pastLease) int {
		return cmp.Or(cmp.Compare(a.Lease.Token, b.Lease.Token), strings.Compare(a.Lease.ID, b.Lease.ID))
	})
	s.Past = past
	return s
}

func (s nodeState) memo(leaseID, requestID string) (reportMemo, bool) {
	if requestID == "" {
		return reportMemo{}, false
	}
	for _, m := range s.Reports {
		if m.Lease.ID == leaseID && m.RequestID == requestID {
			return m, true
		}
	}
	return reportMemo{}, false
}

// remember keeps an applied report's answer for its retries.
func (s nodeState) remember(l leaseRef, requestID string, applied bool) nodeState {
	if requestID == "" {
		return s
	}
	reps := append(slices.Clone(s.Reports), reportMemo{Lease: l, RequestID: requestID, Applied: applied})
	slices.SortFunc(reps, func(a, b reportMemo) int {
		return cmp.Or(strings.Compare(a.Lease.ID, b.Lease.ID), strings.Compare(a.RequestID, b.RequestID))
	})
	s.Reports = reps
	return s
}

func (s nodeState) equal(o nodeState) bool {
	return s.Known == o.Known && s.Holder == o.Holder && s.Final == o.Final && s.Fence == o.Fence && s.Floor == o.Floor &&
		s.LateBelow == o.LateBelow && slices.Equal(s.Past, o.Past) && slices.Equal(s.Reports, o.Reports)
}

func (s nodeState) hash() uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%v|%v|%v|%v|%d|%d|%d|%d", s.Known, s.Holder, s.Final, s.Fence, s.Floor, s.LateBelow, len(s.Past), len(s.Reports))
	for _, p := range s.Past {
		fmt.Fprintf(h, "|%s/%d/%v/%v", p.Lease.ID, p.Lease.Token, p.Expired, p.Late)
	}
	return h.Sum64()
}

func (s nodeState) String() string {
	if !s.Known {
		return "unknown"
	}
	var b strings.Builder
	switch {
	case !s.Holder.none():
		fmt.Fprintf(&b, "held by %s", s.Holder)
	case s.Final:
		b.WriteString("finished")
	default:
		b.WriteString("free")
	}
	if !s.Fence.none() {
		fmt.Fprintf(&b, ", fenced by %s", s.Fence)
	}
	fmt.Fprintf(&b, "; floor %d", s.Floor)
	for _, p := range s.Past {
		late := ""
		switch {
		case p.Late:
			late = " expired, may report late"
		case p.Expired:
			late = " expired"
		}
		fmt.Fprintf(&b, "; was %s%s", p.Lease, late)
	}
	return b.String()
}

func (c nodeCall) String() string {
	switch c.Kind {
	case api.CallRenew:
		return fmt.Sprintf("%s renew %s", c.Edge, c.Lease)
	case api.CallReport:
		return fmt.Sprintf("%s report %s %s (request %s)", c.Edge, c.Lease, c.Outcome, shortID(c.RequestID))
	case kindObserve:
		return "ledger read"
	}
	return fmt.Sprintf("%s %s", c.Edge, c.Kind)
}

func (a nodeAnswer) describe(c nodeCall) string {
	switch {
	case a.Kind == unknown:
		return "no answer (may take effect)"
	case a.Kind == refused:
		return "refused " + string(a.Code)
	}
	switch c.Kind {
	case kindObserve:
		return fmt.Sprintf("%s %s", a.Seen.State, a.Seen.Lease)
	case api.CallAcquire:
		return "granted under " + a.Lease.String()
	case api.CallRenew:
		if a.Listed {
			return "renewed, node listed"
		}
		return "renewed, node NOT listed"
	case api.CallReport:
		switch {
		case a.Missing:
			return "answer does not mention the node"
		case a.Applied:
			return "applied"
		}
		return "rejected"
	}
	return "ok"
}

// edgeModel is the porcupine model of the edge API: one partition per node (the histories
// given to it are already projected, nodeCall.Node says whose).
func edgeModel() porcupine.Model {
	m := porcupine.NondeterministicModel{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			byNode := map[string][]porcupine.Operation{}
			var order []string
			for _, op := range h {
				n := op.Input.(nodeCall).Node
				if _, ok := byNode[n]; !ok {
					order = append(order, n)
				}
				byNode[n] = append(byNode[n], op)
			}
			out := make([][]porcupine.Operation, 0, len(order))
			for _, n := range order {
				out = append(out, byNode[n])
			}
			return out
		},
		Init: func() []any { return []any{nodeState{}} },
		Step: func(state, input, output any) []any {
			next := state.(nodeState).step(input.(nodeCall), output.(nodeAnswer))
			out := make([]any, len(next))
			for i, s := range next {
				out[i] = s
			}
			return out
		},
		Equal: func(a, b any) bool { return a.(nodeState).equal(b.(nodeState)) },
		Hash:  func(s any) uint64 { return s.(nodeState).hash() },
		DescribeOperation: func(in, out any) string {
			c := in.(nodeCall)
			return fmt.Sprintf("%s: %s -> %s", c.Node, c, out.(nodeAnswer).describe(c))
		},
		DescribeState: func(s any) string { return s.(nodeState).String() },
		DescribeOperationMetadata: func(m any) string {
			if m == nil {
				return ""
			}
			return fmt.Sprint(m)
		},
	}
	return m.ToModel()
}
