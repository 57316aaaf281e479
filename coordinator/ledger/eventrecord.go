// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/seed96588659/muster/pkg/api"
)

// eventFormatV1 is the first byte of a binary event record. A JSON record starts with '{', so a
// log written across the protocol's rise, holding both, reads in order.
const eventFormatV1 = 1

// eventKinds are the kinds a record names by code (code*2); any other is written out
// (len*2+1 and its bytes), as history reasons are.
var eventKinds = [...]string{"", api.EventTransition, api.EventForgotten}

// eventValue is what the event log stores for e at cluster protocol protocol: JSON below
// eventRecordProtocol, a record from it (decodeEvent reads both). A record leaves out what its
// key holds and names no field, so a member writes far fewer bytes per node transition; below
// the gate members write JSON, as the builds before did, so every member holds the same bytes.
func eventValue(e *api.Event, protocol int) ([]byte, error) {
	if protocol < eventRecordProtocol {
		return json.Marshal(e)
	}
	return encodeEvent(e), nil
}

// encodeEvent is e's record, without its index and position: they are its key.
func encodeEvent(e *api.Event) []byte {
	return eventRecord(e.Kind, e.Identity, e.Region, &Transition{At: e.At, From: e.From, To: e.To, Reason: e.Reason, Edge: e.Edge, LeaseID: e.LeaseID})
}

// eventRecord is a record of an event of kind on a node: its identity and region, then a node
// history entry (codec.go) of the rest, whose lease token and error an event leaves empty.
func eventRecord(kind, identity, region string, tr *Transition) []byte {
	enc := nodeEncoder{b: make([]byte, 0, 24+len(identity)+len(region)+len(tr.Edge)+len(tr.LeaseID))}
	enc.b = append(enc.b, eventFormatV1)
	enc.b = appendCoded(enc.b, kind, eventKinds[:])
	enc.b = appendStr(enc.b, identity)
	enc.b = appendStr(enc.b, region)
	enc.transition(tr)
	return enc.b
}

// decodeEvent reads the event stored under key k, either format.
func decodeEvent(k, v []byte) (api.Event, error) {
	var e api.Event
	if len(k) != 12 {
		return e, fmt.Errorf("event key of %d bytes, want 12", len(k))
	}
	if len(v) == 0 {
		return e, fmt.Errorf("empty event record")
	}
	switch v[0] {
	case '{':
		if err := json.Unmarshal(v, &e); err != nil {
			return e, err
		}
	case eventFormatV1:
		d := decoder{b: v[1:]}
		e.Kind = d.coded(eventKinds[:], "event kind")
		e.Identity = d.str()
		e.Region = d.str()
		var tr Transition
		d.transition(&tr)
		if d.err == nil && (tr.LeaseToken != 0 || tr.Error != "") {
			d.err = fmt.Errorf("event record carries a lease token or an error")
		}
		if d.err == nil && len(d.b) != 0 {
			d.err = fmt.Errorf("%d trailing bytes in event record", len(d.b))
		}
		if d.err != nil {
			return api.Event{}, d.err
		}
		e.At, e.From, e.To, e.Reason, e.Edge, e.LeaseID = tr.At, tr.From, tr.To, tr.Reason, tr.Edge, tr.LeaseID
	default:
		return e, fmt.Errorf("unknown event record format %d", v[0])
	}
	e.Index, e.Pos = binary.BigEndian.Uint64(k[:8]), binary.BigEndian.Uint32(k[8:])
	return e, nil
}

// appendCoded writes s as its code in table (code*2), or written out (len*2+1, then s).
func appendCoded(b []byte, s string, table []string) []byte {
	for i, v := range table {
		if v == s {
			return binary.AppendUvarint(b, uint64(i)*2)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s))*2+1)
	return append(b, s...)
}

// coded reads what appendCoded wrote; what names the field in an error.
func (d *decoder) coded(table []string, what string) string {
	x := d.uvarint()
	switch {
	case d.err != nil:
		return ""
	case x&1 == 1:
		return d.bytes(x >> 1)
	case x>>1 < uint64(len(table)):
		return table[x>>1]
	}
	d.err = fmt.Errorf("unknown %s code %d", what, x>>1)
	return ""
}
