// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// fullNode sets every field of a node record (TestCodec_EveryFieldPersisted checks that it does).
func fullNode() *Node {
	return &Node{
		Node: api.Node{
			Identity: "n1.example.net", Region: "eu", State: api.StateLeased, Attempts: 2, LeaseID: "l-1", LeaseToken: 1 << 40,
			Edge: "edge-a", InventoryVersion: "0.29.4", TargetVersion: "0.30.0", LastError: "boom", Facts: []byte(`{"a":1}`),
			DiscoveredAt: t0, LeasedAt: t0.Add(time.Second), FinishedAt: time.Date(1960, 1, 1, 0, 0, 0, 999999999, time.UTC), NotBefore: t0.Add(-time.Hour),
			History: []api.Transition{{At: t0, To: api.StateWaiting, Reason: "discovered"}, {At: t0.Add(time.Nanosecond), From: api.StateWaiting, To: api.StateLeased, Edge: "e", LeaseID: "l", LeaseToken: 7, Error: "x"}},
		},
		LockEdge:  "edge-b",
		LockUntil: time.Date(1960, 1, 1, 0, 0, 0, 999999999, time.UTC),
	}
}

func TestCodec_NodeRoundTrip(t *testing.T) {
	full := fullNode()
	for _, n := range []*Node{full, {Node: api.Node{Identity: "bare"}}} {
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

// The node record is the ledger's on-disk format: a record written by an older build must still
// decode to the same node.
func TestCodec_NodeFormatStable(t *testing.T) {
	const v1 = "010e6e312e6578616d706c652e6e6574026575066c656173656404036c2d3180808080802006656467652d6106302e32392e3406302e33302e3004626f6f6d077b2261223a317d01e48ddca7070001e68ddca707000001c4d5dba7070006656467652d6201ffddffac02ff93ebdc030201e48ddca70700000777616974696e670a646973636f76657265640000000001e48ddca707010777616974696e67066c6561736564000165016c070178"
	b, err := hex.DecodeString(v1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeNode(b)
	if err != nil {
		t.Fatalf("decode a version 1 record: %v", err)
	}
	want := fullNode()
	want.FinishedAt = time.Time{} // the recorded node had no FinishedAt
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("version 1 record:\n got %+v\nwant %+v", got, want)
	}
	if enc := hex.EncodeToString(encodeNode(want)); enc != v1 {
		t.Fatalf("node record format changed:\n got %s\nwant %s", enc, v1)
	}
}

// A field added to Node (or to the api.Node it embeds) that the codec does not write would be lost
// on the next write; fullNode sets every field, so the round trip above covers each one.
func TestCodec_EveryFieldPersisted(t *testing.T) {
	var unset []string
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			f, name := v.Field(i), prefix+v.Type().Field(i).Name
			if v.Type().Field(i).Anonymous {
				walk(name+".", f)
				continue
			}
			if f.IsZero() {
				unset = append(unset, name)
			}
		}
	}
	n := fullNode()
	walk("", reflect.ValueOf(n).Elem())
	tt := reflect.TypeFor[api.Transition]()
	for j := range tt.NumField() {
		set := false
		for _, tr := range n.History {
			set = set || !reflect.ValueOf(tr).Field(j).IsZero()
		}
		if !set {
			unset = append(unset, "History[]."+tt.Field(j).Name)
		}
	}
	if len(unset) > 0 {
		t.Fatalf("fullNode leaves %v unset: set them and make sure encodeNode writes them", unset)
	}
}

func TestCodec_NodeHeadAgreesWithTheRecord(t *testing.T) {
	for _, n := range []*Node{fullNode(), {Node: api.Node{Identity: "bare"}}} {
		enc := encodeNode(n)
		region, state, err := decodeNodeHead(enc)
		if err != nil || region != n.Region || state != n.State {
			t.Fatalf("head of %s = %q %q %v, want %q %q", n.Identity, region, state, err, n.Region, n.State)
		}
		head := 1 + len(appendStr(appendStr(appendStr(nil, n.Identity), n.Region), string(n.State)))
		for i := range head {
			if _, _, err := decodeNodeHead(enc[:i]); err == nil {
				t.Fatalf("head of a record truncated to %d bytes decoded", i)
			}
		}
	}
}

// BenchmarkCheckRegister_KnownNodes is the leader's pre-check of a discovery cycle that sees
// 10000 nodes again, each with facts and a full history.
func BenchmarkCheckRegister_KnownNodes(b *testing.B) {
	h := newHarness(b)
	ids := make([]string, MaxBatch)
	nodes := make([]RegisterNode, MaxBatch)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%05d", i)
		nodes[i] = RegisterNode{Identity: ids[i], Region: "eu", Facts: []byte(`{"os":"linux","cores":8,"rack":"r12"}`)}
	}
	mustResult[*RegisterResult](b, h.apply(&Register{Now: t0, Policy: testPolicy(), Nodes: nodes}))
	b.ReportAllocs()
	for b.Loop() {
		if err := h.l.CheckRegister("eu", ids); err != nil {
			b.Fatal(err)
		}
	}
}
