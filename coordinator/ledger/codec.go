// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Node records are the bulk of the ledger and every transition decodes and encodes one on every
// member, so they use a small binary format instead of JSON (JSON cost most of the apply time).
// The first byte is the format version. Version 1 spelled every field out; version 2 (written
// since) is about a third of its size, because the ledger file is mapped and at a million nodes
// its pages were most of a member's resident memory. Both decode; only version 2 is written.
const (
	nodeFormatV1 = 1
	nodeFormatV2 = 2
)

var errShort = errors.New("truncated record")

// Version 2, after the version byte:
//
//	head        uvarint: state code (3 bits) | presence bits << 3 (v2Fields)
//	[state]     string, when the state code is codeLiteral
//	fields      the present ones, in the order of their bits
//	history     uvarint count, then each entry:
//	  head      uvarint: to code | from code << 3 | trLease << 6 | trError << 7 | trNoTime << 8 | trRegion << 9
//	  [from][to] strings, for codeLiteral
//	  reason    uvarint: 2*code in nodeReasons, or 2*len+1 and the text
//	  [at]      time, unless trNoTime
//	  edge      interned string
//	  [lease]   interned lease id, uvarint token, with trLease
//	  [error]   string, with trError
//	  [region]  interned string (FromRegion), with trRegion
//
// The identity is the record's key and is not repeated. A time is relative to the one written
// before it in the record (uvarint zig-zag nanoseconds + 1; 0 = absolute follows), the first one
// absolute (varint seconds, uvarint nanoseconds): most of a node's times are one leader stamp or
// seconds apart. An interned string (edge names, lease ids: each recurs through a history) is a
// uvarint: 0 empty, 2*len+1 and the text (then numbered from 1 in the record), or 2*number.
// The codes below are on-disk format: append, never renumber. A field or flag added later is
// written only once the cluster protocol that writes it is raised (PriorState and trRegion:
// cluster protocol 7; the hold fields: 8), so a member of a build before it never meets a record it cannot decode;
// a state field is its state code (uvarint), then the name for codeLiteral.

// nodeStates are the state codes; codeLiteral spells a state not listed. The code is 3 bits and
// 7 is codeLiteral, so the table is full: api.StateGone and any later state are spelled out.
var nodeStates = [...]api.NodeState{"", api.StateWaiting, api.StateLeased, api.StateProvisioned, api.StateDeferred, api.StateShutdown, api.StateAbandoned}

const codeLiteral = 7

// nodeReasons are the history reasons the ledger writes (register.go, grant.go, report.go,
// expire.go); others, such as "failed; abandoned after 5 attempts", are spelled out.
var nodeReasons = [...]string{
	"", "discovered", "granted", "released by the edge", "provisioned", "failed", "upgrade sent",
	"lease expired", "helper deferred", "helper asked for shutdown",
	"provisioning lock held by another worker", "seen again in provisioning mode", "seen again after defer",
}

// v2Fields are the optional fields of a version 2 node record, in the order of their presence
// bits after the record's 3-bit state code (Region is bit 0): the common ones first so that the
// head of a node waiting for its first lease is one byte. of points at the field of n: a string
// (interned or not), a time, a uint64 (uvarint), an int (varint) or JSON (as a string).
var v2Fields = [...]struct {
	of       func(n *Node) any
	interned bool
}{
	{of: func(n *Node) any { return &n.Region }},
	{of: func(n *Node) any { return &n.InventoryVersion }},
	{of: func(n *Node) any { return &n.DiscoveredAt }},
	{of: func(n *Node) any { return &n.NotBefore }},
	{of: func(n *Node) any { return &n.LockEdge }, interned: true},
	{of: func(n *Node) any { return &n.LockUntil }},
	{of: func(n *Node) any { return &n.LeaseID }, interned: true},
	{of: func(n *Node) any { return &n.LeaseToken }},
	{of: func(n *Node) any { return &n.Edge }, interned: true},
	{of: func(n *Node) any { return &n.LeasedAt }},
	{of: func(n *Node) any { return &n.FinishedAt }},
	{of: func(n *Node) any { return &n.TargetVersion }},
	{of: func(n *Node) any { return &n.LastError }},
	{of: func(n *Node) any { return &n.Attempts }},
	{of: func(n *Node) any { return &n.Facts }},
	{of: func(n *Node) any { return &n.PriorState }},
	{of: func(n *Node) any { return &n.HoldReason }},
	{of: func(n *Node) any { return &n.HeldAt }},
	{of: func(n *Node) any { return &n.HoldEdge }, interned: true},
	{of: func(n *Node) any { return &n.HoldDetail }},
}

// present reports whether the field p points at (one of v2Fields) is set, so written.
func present(p any) bool {
	switch p := p.(type) {
	case *string:
		return *p != ""
	case *time.Time:
		return !p.IsZero()
	case *uint64:
		return *p != 0
	case *int:
		return *p != 0
	case *json.RawMessage:
		return len(*p) > 0
	case *api.NodeState:
		return *p != ""
	}
	panic(fmt.Sprintf("node field of type %T", p))
}

// Flags of a version 2 history entry, after its two 3-bit state codes.
const (
	trLease  = 1 << 6
	trError  = 1 << 7
	trNoTime = 1 << 8
	trRegion = 1 << 9
)

func stateCode(s api.NodeState) uint64 {
	for i, v := range nodeStates {
		if v == s {
			return uint64(i)
		}
	}
	return codeLiteral
}

// nodeEncoder carries what a version 2 record refers back to: the last time written and the
// interned strings.
type nodeEncoder struct {
	b        []byte
	last     time.Time
	interned []string
}

func encodeNode(n *Node) []byte {
	e := nodeEncoder{b: make([]byte, 0, 64+len(n.Facts)+len(n.History)*24)}
	e.b = append(e.b, nodeFormatV2)
	var mask uint64
	for i, f := range v2Fields {
		if present(f.of(n)) {
			mask |= 1 << i
		}
	}
	sc := stateCode(n.State)
	e.b = binary.AppendUvarint(e.b, sc|mask<<3)
	if sc == codeLiteral {
		e.b = appendStr(e.b, string(n.State))
	}
	for i, f := range v2Fields {
		if mask&(1<<i) != 0 {
			e.field(f.of(n), f.interned)
		}
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(n.History)))
	for i := range n.History {
		e.transition(&n.History[i])
	}
	return e.b
}

// field writes the field p points at (one of v2Fields).
func (e *nodeEncoder) field(p any, interned bool) {
	switch p := p.(type) {
	case *string:
		if interned {
			e.intern(*p)
		} else {
			e.b = appendStr(e.b, *p)
		}
	case *time.Time:
		e.time(*p)
	case *uint64:
		e.b = binary.AppendUvarint(e.b, *p)
	case *int:
		e.b = binary.AppendVarint(e.b, int64(*p))
	case *json.RawMessage:
		e.b = appendStr(e.b, string(*p))
	case *api.NodeState:
		sc := stateCode(*p)
		e.b = binary.AppendUvarint(e.b, sc)
		if sc == codeLiteral {
			e.b = appendStr(e.b, string(*p))
		}
	default:
		panic(fmt.Sprintf("node field of type %T", p))
	}
}

func (e *nodeEncoder) transition(t *Transition) {
	from, to := stateCode(t.From), stateCode(t.To)
	head := to | from<<3
	if t.LeaseID != "" || t.LeaseToken != 0 {
		head |= trLease
	}
	if t.Error != "" {
		head |= trError
	}
	if t.At.IsZero() {
		head |= trNoTime
	}
	if t.FromRegion != "" {
		head |= trRegion
	}
	e.b = binary.AppendUvarint(e.b, head)
	if from == codeLiteral {
		e.b = appendStr(e.b, string(t.From))
	}
	if to == codeLiteral {
		e.b = appendStr(e.b, string(t.To))
	}
	e.b = appendCoded(e.b, t.Reason, nodeReasons[:])
	if head&trNoTime == 0 {
		e.time(t.At)
	}
	e.intern(t.Edge)
	if head&trLease != 0 {
		e.intern(t.LeaseID)
		e.b = binary.AppendUvarint(e.b, t.LeaseToken)
	}
	if head&trError != 0 {
		e.b = appendStr(e.b, t.Error)
	}
	if head&trRegion != 0 {
		e.intern(t.FromRegion)
	}
}

// maxDeltaSec bounds a relative time so that its nanoseconds, doubled by zig-zag, fit a uint64.
const maxDeltaSec = 1 << 32

// time writes a non-zero t relative to the time written before it, or absolute.
func (e *nodeEncoder) time(t time.Time) {
	sec, nsec := t.Unix(), int64(t.Nanosecond())
	if e.last.IsZero() {
		e.b = binary.AppendVarint(e.b, sec)
		e.b = binary.AppendUvarint(e.b, uint64(nsec))
	} else if dsec := sec - e.last.Unix(); dsec > -maxDeltaSec && dsec < maxDeltaSec {
		d := dsec*1e9 + nsec - int64(e.last.Nanosecond())
		e.b = binary.AppendUvarint(e.b, uint64(d<<1^d>>63)+1)
	} else {
		e.b = append(e.b, 0)
		e.b = binary.AppendVarint(e.b, sec)
		e.b = binary.AppendUvarint(e.b, uint64(nsec))
	}
	e.last = t
}

func (e *nodeEncoder) intern(s string) {
	if s == "" {
		e.b = append(e.b, 0)
		return
	}
	for i, v := range e.interned {
		if v == s {
			e.b = binary.AppendUvarint(e.b, uint64(i+1)*2)
			return
		}
	}
	e.interned = append(e.interned, s)
	e.b = binary.AppendUvarint(e.b, uint64(len(s))*2+1)
	e.b = append(e.b, s...)
}

// decodeNode reads the record stored under key id, of either version.
func decodeNode(id string, b []byte) (*Node, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty node record")
	}
	switch b[0] {
	case nodeFormatV1:
		return decodeNodeV1(b[1:])
	case nodeFormatV2:
		return decodeNodeV2(id, b[1:])
	}
	return nil, fmt.Errorf("unknown node record format %d", b[0])
}

func decodeNodeV2(id string, b []byte) (*Node, error) {
	d := decoder{b: b}
	n := &Node{}
	n.Identity = id
	head := d.uvarint()
	mask := head >> 3
	n.State = d.state(head & 7)
	for i, f := range v2Fields {
		if mask&(1<<i) != 0 {
			d.field(f.of(n), f.interned)
		}
	}
	if mask >= 1<<len(v2Fields) && d.err == nil {
		d.err = fmt.Errorf("unknown fields %#x in node record", mask)
	}
	if h := d.uvarint(); h > 0 && d.err == nil {
		if h > uint64(len(d.b)) {
			return nil, errShort
		}
		n.History = make([]Transition, h)
		for i := range n.History {
			d.transition(&n.History[i])
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d trailing bytes in node record", len(d.b))
	}
	return n, nil
}

// field reads the field p points at (one of v2Fields).
func (d *decoder) field(p any, interned bool) {
	switch p := p.(type) {
	case *string:
		if interned {
			*p = d.interned()
		} else {
			*p = d.str()
		}
	case *time.Time:
		*p = d.relTime()
	case *uint64:
		*p = d.uvarint()
	case *int:
		*p = int(d.varint())
	case *json.RawMessage:
		*p = []byte(d.str())
	case *api.NodeState:
		code := d.uvarint()
		if code > codeLiteral && d.err == nil {
			d.err = fmt.Errorf("state code %d in node record", code)
		}
		*p = d.state(min(code, codeLiteral))
	default:
		panic(fmt.Sprintf("node field of type %T", p))
	}
}

func (d *decoder) transition(t *Transition) {
	head := d.uvarint()
	if head >= trRegion<<1 && d.err == nil {
		d.err = fmt.Errorf("unknown flags %#x in history entry", head)
	}
	t.From = d.state(head >> 3 & 7)
	t.To = d.state(head & 7)
	t.Reason = d.coded(nodeReasons[:], "history reason")
	if head&trNoTime == 0 {
		t.At = d.relTime()
	}
	t.Edge = d.interned()
	if head&trLease != 0 {
		t.LeaseID = d.interned()
		t.LeaseToken = d.uvarint()
	}
	if head&trError != 0 {
		t.Error = d.str()
	}
	if head&trRegion != 0 {
		t.FromRegion = d.interned()
	}
}

func decodeNodeV1(b []byte) (*Node, error) {
	d := decoder{b: b}
	n := &Node{}
	n.Identity = d.str()
	n.Region = d.str()
	n.State = api.NodeState(d.str())
	n.Attempts = int(d.varint())
	n.LeaseID = d.str()
	n.LeaseToken = d.uvarint()
	n.Edge = d.str()
	n.InventoryVersion = d.str()
	n.TargetVersion = d.str()
	n.LastError = d.str()
	if f := d.str(); f != "" {
		n.Facts = []byte(f)
	}
	n.DiscoveredAt = d.time()
	n.LeasedAt = d.time()
	n.FinishedAt = d.time()
	n.NotBefore = d.time()
	n.LockEdge = d.str()
	n.LockUntil = d.time()
	if h := d.uvarint(); h > 0 && d.err == nil {
		if h > uint64(len(d.b)) {
			return nil, errShort
		}
		n.History = make([]Transition, h)
		for i := range n.History {
			t := &n.History[i]
			t.At = d.time()
			t.From = api.NodeState(d.str())
			t.To = api.NodeState(d.str())
			t.Reason = d.str()
			t.Edge = d.str()
			t.LeaseID = d.str()
			t.LeaseToken = d.uvarint()
			t.Error = d.str()
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d trailing bytes in node record", len(d.b))
	}
	return n, nil
}

// decodeNodeHead reads only the region and state a record starts with, for the checks and filters
// that need nothing else: a whole record carries facts and history.
func decodeNodeHead(b []byte) (region string, state api.NodeState, err error) {
	if len(b) == 0 {
		return "", "", fmt.Errorf("empty node record")
	}
	d := decoder{b: b[1:]}
	switch b[0] {
	case nodeFormatV1:
		d.skipStr() // identity
		region = d.str()
		state = api.NodeState(d.str())
	case nodeFormatV2:
		head := d.uvarint()
		state = d.state(head & 7)
		if head>>3&1 != 0 { // Region, v2Fields[0]
			region = d.str()
		}
	default:
		return "", "", fmt.Errorf("unknown node record format %d", b[0])
	}
	return region, state, d.err
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

type decoder struct {
	b   []byte
	err error
	// last and strs are what a version 2 record refers back to (see encodeNode).
	last time.Time
	strs []string
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint undoes binary.AppendVarint's zig-zag encoding of an unsigned varint.
func (d *decoder) varint() int64 {
	ux := d.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (d *decoder) skipStr() {
	l := d.uvarint()
	if d.err == nil && l > uint64(len(d.b)) {
		d.err = errShort
	}
	if d.err == nil {
		d.b = d.b[l:]
	}
}

func (d *decoder) str() string {
	return d.bytes(d.uvarint())
}

// bytes reads a string of l bytes.
func (d *decoder) bytes(l uint64) string {
	if d.err != nil {
		return ""
	}
	if l > uint64(len(d.b)) {
		d.err = errShort
		return ""
	}
	s := string(d.b[:l])
	d.b = d.b[l:]
	return s
}

func (d *decoder) state(code uint64) api.NodeState {
	if code == codeLiteral {
		return api.NodeState(d.str())
	}
	return nodeStates[code]
}

func (d *decoder) interned() string {
	x := d.uvarint()
	switch {
	case d.err != nil || x == 0:
		return ""
	case x&1 == 1:
		s := d.bytes(x >> 1)
		d.strs = append(d.strs, s)
		return s
	case x>>1 > uint64(len(d.strs)):
		d.err = fmt.Errorf("reference to interned string %d of %d", x>>1, len(d.strs))
		return ""
	}
	return d.strs[x>>1-1]
}

// relTime reads a version 2 time (see encodeNode).
func (d *decoder) relTime() time.Time {
	if d.last.IsZero() {
		d.last = d.absTime()
		return d.last
	}
	u := d.uvarint()
	if d.err != nil {
		return time.Time{}
	}
	if u == 0 {
		d.last = d.absTime()
		return d.last
	}
	u--
	delta := int64(u >> 1)
	if u&1 != 0 {
		delta = ^delta
	}
	if delta <= -maxDeltaSec*1e9-1e9 || delta >= maxDeltaSec*1e9+1e9 {
		d.err = fmt.Errorf("relative time %dns out of range", delta)
		return time.Time{}
	}
	total := int64(d.last.Nanosecond()) + delta
	sec, nsec := d.last.Unix()+total/1e9, total%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	d.last = time.Unix(sec, nsec).UTC()
	if d.last.IsZero() {
		d.err = errors.New("relative time is the zero time")
	}
	return d.last
}

// absTime reads seconds and nanoseconds since the epoch of a time that is set.
func (d *decoder) absTime() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if d.err != nil {
		return time.Time{}
	}
	if nsec >= 1e9 {
		d.err = fmt.Errorf("nanoseconds %d out of range", nsec)
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec)).UTC()
	if t.IsZero() {
		d.err = errors.New("absolute time is the zero time")
	}
	return t
}

func (d *decoder) time() time.Time {
	if d.err != nil {
		return time.Time{}
	}
	if len(d.b) == 0 {
		d.err = errShort
		return time.Time{}
	}
	set := d.b[0]
	d.b = d.b[1:]
	if set == 0 {
		return time.Time{}
	}
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.err = fmt.Errorf("nanoseconds %d out of range", nsec)
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}
