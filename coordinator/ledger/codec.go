// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Node records are the bulk of the ledger and every transition decodes and encodes one on every
// member, so they use a small binary format instead of JSON (JSON cost most of the apply time).
// The first byte is the format version.
const nodeFormatV1 = 1

var errShort = errors.New("truncated record")

func encodeNode(n *Node) []byte {
	b := make([]byte, 0, 160+len(n.Facts)+len(n.History)*64)
	b = append(b, nodeFormatV1)
	b = appendStr(b, n.Identity)
	b = appendStr(b, n.Region)
	b = appendStr(b, string(n.State))
	b = binary.AppendVarint(b, int64(n.Attempts))
	b = appendStr(b, n.LeaseID)
	b = binary.AppendUvarint(b, n.LeaseToken)
	b = appendStr(b, n.Edge)
	b = appendStr(b, n.InventoryVersion)
	b = appendStr(b, n.TargetVersion)
	b = appendStr(b, n.LastError)
	b = appendStr(b, string(n.Facts))
	b = appendTime(b, n.DiscoveredAt)
	b = appendTime(b, n.LeasedAt)
	b = appendTime(b, n.FinishedAt)
	b = appendTime(b, n.NotBefore)
	b = appendStr(b, n.LockEdge)
	b = appendTime(b, n.LockUntil)
	b = binary.AppendUvarint(b, uint64(len(n.History)))
	for _, t := range n.History {
		b = appendTime(b, t.At)
		b = appendStr(b, string(t.From))
		b = appendStr(b, string(t.To))
		b = appendStr(b, t.Reason)
		b = appendStr(b, t.Edge)
		b = appendStr(b, t.LeaseID)
		b = binary.AppendUvarint(b, t.LeaseToken)
		b = appendStr(b, t.Error)
	}
	return b
}

func decodeNode(b []byte) (*Node, error) {
	if len(b) == 0 || b[0] != nodeFormatV1 {
		return nil, fmt.Errorf("unknown node record format")
	}
	d := decoder{b: b[1:]}
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
		n.History = make([]api.Transition, h)
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
	if len(b) == 0 || b[0] != nodeFormatV1 {
		return "", "", fmt.Errorf("unknown node record format")
	}
	d := decoder{b: b[1:]}
	d.skipStr() // identity
	region = d.str()
	state = api.NodeState(d.str())
	return region, state, d.err
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTime writes zero as one byte so unset times stay unset; others are seconds and
// nanoseconds since the epoch in UTC (the leader stamps UTC).
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

type decoder struct {
	b   []byte
	err error
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
	l := d.uvarint()
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
