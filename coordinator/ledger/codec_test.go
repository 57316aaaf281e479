// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"reflect"
	"testing"
	"time"
)

func TestCodec_NodeRoundTrip(t *testing.T) {
	full := &Node{
		Identity: "n1.example.net", Region: "eu", State: StateLeased, Attempts: 2, LeaseID: "l-1", LeaseToken: 1 << 40,
		Edge: "edge-a", InventoryVersion: "0.29.4", TargetVersion: "0.30.0", LastError: "boom", Facts: []byte(`{"a":1}`),
		DiscoveredAt: t0, LeasedAt: t0.Add(time.Second), NotBefore: t0.Add(-time.Hour), LockEdge: "edge-b",
		LockUntil: time.Date(1960, 1, 1, 0, 0, 0, 999999999, time.UTC),
		History:   []Transition{{At: t0, To: StateWaiting, Reason: "discovered"}, {At: t0.Add(time.Nanosecond), From: StateWaiting, To: StateLeased, Edge: "e", LeaseID: "l", LeaseToken: 7, Error: "x"}},
	}
	for _, n := range []*Node{full, {Identity: "bare"}} {
		got, err := decodeNode(encodeNode(n))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, n) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, n)
		}
	}
	enc := encodeNode(full)
	for i := range len(enc) - 1 {
		if _, err := decodeNode(enc[:i]); err == nil {
			t.Fatalf("truncated record of %d bytes decoded", i)
		}
	}
	if _, err := decodeNode(append(enc, 0)); err == nil {
		t.Fatal("record with trailing bytes decoded")
	}
}
