// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// fullNode sets every field of a node record (TestCodec_EveryFieldPersisted checks that it does).
func fullNode() *Node {
	return &Node{
		Identity: "n1.example.net", Region: "eu", State: api.StateLeased, Attempts: 2, LeaseID: "l-1", LeaseToken: 1 << 40,
		Edge: "edge-a", InventoryVersion: "0.29.4", TargetVersion: "0.30.0", LastError: "boom", Facts: []byte(`{"a":1}`),
		DiscoveredAt: t0, LeasedAt: t0.Add(time.Second), FinishedAt: time.Date(1960, 1, 1, 0, 0, 0, 999999999, time.UTC), NotBefore: t0.Add(-time.Hour),
		History:    []Transition{{At: t0, To: api.StateWaiting, Reason: "discovered"}, {At: t0.Add(time.Nanosecond), From: api.StateWaiting, To: api.StateLeased, Edge: "e", LeaseID: "l", LeaseToken: 7, Error: "x", FromRegion: "us"}},
		LockEdge:   "edge-b",
		LockUntil:  time.Date(1960, 1, 1, 0, 0, 0, 999999999, time.UTC),
		PriorState: api.StateProvisioned,
		HoldReason: api.HoldDuplicateResponder, HeldAt: t0.Add(time.Minute), HoldEdge: "edge-b", HoldDetail: "duplicate_responder: x",
	}
}

// withoutProtocol8 is n without the fields a record gets only from cluster protocol 8 (the
// hold's): what a record of a build before them holds.
func withoutProtocol8(n *Node) *Node {
	c := *n
	c.HoldReason, c.HeldAt, c.HoldEdge, c.HoldDetail = "", time.Time{}, "", ""
	return &c
}

// withoutProtocol7 is n without the fields a record gets only from cluster protocol 7
// (PriorState, Transition.FromRegion) and later: what a record of a build before them holds.
func withoutProtocol7(n *Node) *Node {
	c := *withoutProtocol8(n)
	c.PriorState = ""
	c.History = slices.Clone(n.History)
	for i := range c.History {
		c.History[i].FromRegion = ""
	}
	return &c
}

// oddNodes are records the ledger does not write today but the codec must keep exactly: states
// and reasons outside its tables, times far apart and out of order, no times at all, a history
// of the full default length with edges and leases that recur.
func oddNodes() []*Node {
	far := &Node{
		Identity: "far", State: "unheard-of", Attempts: -3, DiscoveredAt: time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
		LeasedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), NotBefore: time.Unix(0, 1).UTC(),
		FinishedAt: time.Unix(-1, 999999999).UTC(),
		History: []Transition{
			{From: "unheard-of", To: api.StateAbandoned, Reason: "failed; abandoned after 5 attempts"},
			{At: t0, From: api.StateAbandoned, To: "other", LeaseToken: 3},
			{At: t0.Add(-time.Hour), LeaseID: "only-a-lease"},
		},
	}
	long := &Node{Identity: "long", Region: "eu", State: api.StateLeased, LeaseID: "lease-19", LeaseToken: 19, Edge: "edge-1", DiscoveredAt: t0}
	for i := range 20 {
		long.History = append(long.History, Transition{
			At: t0.Add(time.Duration(i) * 1500 * time.Millisecond), From: nodeStates[i%7], To: nodeStates[(i+1)%7],
			Reason: nodeReasons[i%len(nodeReasons)], Edge: fmt.Sprintf("edge-%d", i%3), LeaseID: fmt.Sprintf("lease-%d", i), LeaseToken: uint64(i),
		})
	}
	return []*Node{far, long}
}

// randomNode draws a node from a small alphabet, so strings and times recur as they do in a ledger.
func randomNode(r *rand.Rand) *Node {
	str := func(of ...string) string { return of[r.IntN(len(of))] }
	tm := func() time.Time {
		switch r.IntN(4) {
		case 0:
			return time.Time{}
		case 1:
			return t0
		case 2:
			return t0.Add(time.Duration(r.Int64N(int64(48 * time.Hour))))
		}
		return time.Unix(r.Int64N(1<<40)-1<<39, r.Int64N(1e9)).UTC()
	}
	states := append([]api.NodeState{"bogus"}, nodeStates[:]...)
	reasons := append([]string{"not in the table", "failed; abandoned after 5 attempts"}, nodeReasons[:]...)
	edges := []string{"", "edge-a", "edge-b", "edge-c"}
	n := &Node{
		Identity: fmt.Sprintf("n%d", r.IntN(1000)), Region: str("", "eu", "us"), State: states[r.IntN(len(states))],
		Attempts: r.IntN(7) - 1, LeaseID: str("", "l-1", "l-2"), LeaseToken: uint64(r.IntN(3)) << uint(r.IntN(64)),
		Edge: str(edges...), InventoryVersion: str("", "0.29.4"), TargetVersion: str("", "0.30.0"), LastError: str("", "boom"),
		DiscoveredAt: tm(), LeasedAt: tm(), FinishedAt: tm(), NotBefore: tm(),
		LockEdge: str(edges...), LockUntil: tm(), PriorState: states[r.IntN(len(states))],
	}
	if r.IntN(2) == 0 {
		n.Facts = []byte(`{"a":1}`)
	}
	for range r.IntN(22) {
		n.History = append(n.History, Transition{
			At: tm(), From: states[r.IntN(len(states))], To: states[r.IntN(len(states))], Reason: reasons[r.IntN(len(reasons))],
			Edge: str(edges...), LeaseID: str("", "l-1", "l-2", "l-3"), LeaseToken: uint64(r.IntN(3)), Error: str("", "", "x"),
			FromRegion: str("", "", "", "eu", "us"),
		})
	}
	return n
}

func TestCodec_NodeRoundTrip(t *testing.T) {
	nodes := append([]*Node{fullNode(), {Identity: "bare"}}, oddNodes()...)
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		nodes = append(nodes, randomNode(r))
	}
	for _, n := range nodes {
		enc := encodeNode(n)
		if enc[0] != nodeFormatV2 {
			t.Fatalf("encodeNode wrote format %d", enc[0])
		}
		got, err := decodeNode(n.Identity, enc)
		if err != nil {
			t.Fatalf("decode %+v: %v", n, err)
		}
		if !reflect.DeepEqual(got, n) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, n)
		}
		// The same node written by an older member decodes to the same node (a version 1
		// record never held the fields of cluster protocol 7).
		if v1, err := decodeNode("ignored", encodeNodeV1(n)); err != nil || !reflect.DeepEqual(v1, withoutProtocol7(n)) {
			t.Fatalf("version 1 record: %v\n got %+v\nwant %+v", err, v1, withoutProtocol7(n))
		}
		if !bytes.Equal(encodeNode(got), enc) {
			t.Fatalf("re-encoding %s changed its record", n.Identity)
		}
	}
	for _, n := range append([]*Node{fullNode()}, oddNodes()...) {
		for _, enc := range [][]byte{encodeNode(n), encodeNodeV1(n)} {
			for i := range len(enc) - 1 {
				if _, err := decodeNode(n.Identity, enc[:i]); err == nil {
					t.Fatalf("%s: truncated record of %d bytes (format %d) decoded", n.Identity, i, enc[0])
				}
			}
			if _, err := decodeNode(n.Identity, append(enc, 0)); err == nil {
				t.Fatalf("%s: record with trailing bytes (format %d) decoded", n.Identity, enc[0])
			}
		}
	}
}

func TestCodec_RefusesUnknownRecords(t *testing.T) {
	for _, c := range []struct{ name, hex, err string }{
		{"empty", "", "empty"},
		{"version 3", "03", "format 3"},
		{"unknown node field", "028080800400", "unknown fields"},
		{"unknown entry flag", "0200018008", "unknown flags"},
		{"prior state code out of range", "028080100800", "state code 8"},
		{"unknown reason code", "020001017e", "reason code 63"},
		{"dangling string ref", "02000180020004", "interned string 2 of 0"},
		{"relative time too far", "02600a00ffffffffffffffffff0100", "out of range"},
	} {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := decodeNode("x", b); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: decoded %+v, %v; want an error saying %q", c.name, n, err, c.err)
		}
	}
}

// The node record is the ledger's on-disk format: a record written by an older build must still
// decode to the same node, and the format written must not change unnoticed (every member must
// write the same bytes: Digest compares them).
func TestCodec_NodeFormatStable(t *testing.T) {
	const v1 = "010e6e312e6578616d706c652e6e6574026575066c656173656404036c2d3180808080802006656467652d6106302e32392e3406302e33302e3004626f6f6d077b2261223a317d01e48ddca7070001e68ddca707000001c4d5dba7070006656467652d6201ffddffac02ff93ebdc030201e48ddca70700000777616974696e670a646973636f76657265640000000001e48ddca707010777616974696e67066c6561736564000165016c070178"
	const v2 = "02fabf0f02657506302e32392e34e48ddca707008080c58bc6d1010d656467652d6282a89ce49b9d8fff23076c2d318080808080200d656467652d6183d0b7a9e9ee90ff2306302e33302e3004626f6f6d04077b2261223a317d02010280a8d6b90700ca0100030365036c070178"
	want := withoutProtocol7(fullNode()) // the records were written before cluster protocol 7
	want.FinishedAt = time.Time{}        // the recorded node had no FinishedAt
	for _, rec := range []struct {
		name, hex string
	}{{"version 1", v1}, {"version 2", v2}} {
		b, err := hex.DecodeString(rec.hex)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeNode(want.Identity, b)
		if err != nil {
			t.Fatalf("decode a %s record: %v", rec.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s record:\n got %+v\nwant %+v", rec.name, got, want)
		}
		region, state, err := decodeNodeHead(b)
		if err != nil || region != want.Region || state != want.State {
			t.Fatalf("head of a %s record = %q %q %v", rec.name, region, state, err)
		}
	}
	if enc := hex.EncodeToString(encodeNode(want)); enc != v2 {
		t.Fatalf("node record format changed:\n got %s\nwant %s", enc, v2)
	}
	// With the fields of cluster protocol 7: a prior state and a move's region.
	const v2p7 = "02fabf1f02657506302e32392e34e48ddca707008080c58bc6d1010d656467652d6282a89ce49b9d8fff23076c2d318080808080200d656467652d6183d0b7a9e9ee90ff2306302e33302e3004626f6f6d04077b2261223a317d0302010280a8d6b90700ca0500030365036c070178057573"
	want = withoutProtocol8(fullNode())
	want.FinishedAt = time.Time{}
	b, err := hex.DecodeString(v2p7)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeNode(want.Identity, b); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("record with protocol 7 fields: %v\n got %+v\nwant %+v", err, got, want)
	}
	if enc := hex.EncodeToString(encodeNode(want)); enc != v2p7 {
		t.Fatalf("node record format with protocol 7 fields changed:\n got %s\nwant %s", enc, v2p7)
	}
	// With the fields of cluster protocol 8: a hold's reason, time, edge and detail.
	const v2p8 = "02fabfff0302657506302e32392e34e48ddca707008080c58bc6d1010d656467652d6282a89ce49b9d8fff23076c2d318080808080200d656467652d6183d0b7a9e9ee90ff2306302e33302e3004626f6f6d04077b2261223a317d03136475706c69636174655f726573706f6e64657281b8e4cab70302166475706c69636174655f726573706f6e6465723a207802010280e0ba84bf0300ca0500030365036c070178057573"
	want = fullNode()
	want.FinishedAt = time.Time{}
	if b, err = hex.DecodeString(v2p8); err != nil {
		t.Fatal(err)
	}
	if got, err := decodeNode(want.Identity, b); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("record with protocol 8 fields: %v\n got %+v\nwant %+v", err, got, want)
	}
	if enc := hex.EncodeToString(encodeNode(want)); enc != v2p8 {
		t.Fatalf("node record format with protocol 8 fields changed:\n got %s\nwant %s", enc, v2p8)
	}
}

// A node as a million-node ledger holds most of them: registered, waiting for its first lease.
// Its record is what the ledger file (mapped, so resident) is made of.
func TestCodec_WaitingNodeRecordIsSmall(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 30, 24, 123456789, time.UTC)
	n := &Node{
		Identity: "node-0123456.example.net", Region: "region-3", State: api.StateWaiting, InventoryVersion: "0.29.4",
		DiscoveredAt: now, NotBefore: now,
		History: []Transition{{At: now, To: api.StateWaiting, Reason: "discovered", Edge: "edge-region-3"}},
	}
	v1, v2 := len(encodeNodeV1(n)), len(encodeNode(n))
	t.Logf("waiting node: version 1 %d bytes, version 2 %d bytes", v1, v2)
	// version byte, head, region, version, one absolute and one relative time, a one-entry
	// history: the strings are 30 bytes of it.
	if v2 > 48 {
		t.Fatalf("version 2 record of a waiting node is %d bytes (version 1: %d), want at most 48", v2, v1)
	}
}

// A field added to Node or Transition that the codec does not write would be lost on the next
// write; fullNode sets every field, so the round trip above covers each one.
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
	tt := reflect.TypeFor[Transition]()
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
	for _, n := range append([]*Node{fullNode(), {Identity: "bare"}}, oddNodes()...) {
		for _, enc := range [][]byte{encodeNode(n), encodeNodeV1(n)} {
			region, state, err := decodeNodeHead(enc)
			if err != nil || region != n.Region || state != n.State {
				t.Fatalf("head of %s (format %d) = %q %q %v, want %q %q", n.Identity, enc[0], region, state, err, n.Region, n.State)
			}
			// Where the head ends: after the region, or the state's name when it is spelled out.
			head := 1 + len(appendStr(appendStr(appendStr(nil, n.Identity), n.Region), string(n.State)))
			if enc[0] == nodeFormatV2 {
				h, l := binary.Uvarint(enc[1:])
				head = 1 + l
				if h&7 == codeLiteral {
					head += len(appendStr(nil, string(n.State)))
				}
				if n.Region != "" {
					head += len(appendStr(nil, n.Region))
				}
			}
			for i := range head {
				if _, _, err := decodeNodeHead(enc[:i]); err == nil {
					t.Fatalf("head of a record (format %d) truncated to %d bytes decoded", enc[0], i)
				}
			}
		}
	}
}

// A ledger written by an older build holds version 1 records: they read as before, and the next
// transition of each rewrites it as version 2.
func TestLedger_ReadsAndRewritesVersion1Records(t *testing.T) {
	h := newHarness(t)
	h.register(t0, "eu", "a", "b")
	want := map[string]*Node{"a": h.node("a"), "b": h.node("b")}
	if err := h.l.db.Update(func(tx *bolt.Tx) error {
		for id, n := range want {
			if err := tx.Bucket(bucketNodes).Put([]byte(id), encodeNodeV1(n)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, n := range want {
		if got := h.node(id); !reflect.DeepEqual(got, n) {
			t.Fatalf("version 1 record of %s:\n got %+v\nwant %+v", id, got, n)
		}
	}
	nodes, _, err := h.l.Nodes(NodeFilter{Region: "eu", State: api.StateWaiting, WithHistory: true})
	if err != nil || len(nodes) != 2 || !reflect.DeepEqual(&nodes[0], want["a"]) {
		t.Fatalf("Nodes over version 1 records = %+v, %v", nodes, err)
	}
	ls := h.grant(t0.Add(time.Second), "edge-a", "eu", 1)
	if ls == nil || len(ls.Nodes) != 1 {
		t.Fatalf("grant over version 1 records: %+v", ls)
	}
	granted := h.node(ls.Nodes[0])
	if granted.State != api.StateLeased || len(granted.History) != 2 || !reflect.DeepEqual(granted.History[0], want[ls.Nodes[0]].History[0]) {
		t.Fatalf("granted node %+v", granted)
	}
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		for id := range want {
			v := tx.Bucket(bucketNodes).Get([]byte(id))
			if w := map[bool]byte{true: nodeFormatV2, false: nodeFormatV1}[id == ls.Nodes[0]]; v[0] != w {
				return fmt.Errorf("record of %s is format %d, want %d", id, v[0], w)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// encodeNodeV1 is the version 1 encoder, kept to write the records an older build wrote.
func encodeNodeV1(n *Node) []byte {
	b := []byte{nodeFormatV1}
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

// BenchmarkRegisterRefusals_KnownNodes is the leader's pre-check of a discovery cycle that sees
// 10000 nodes again, each with facts and a full history.
func BenchmarkRegisterRefusals_KnownNodes(b *testing.B) {
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
		if refused, err := h.l.RegisterRefusals("eu", ids); err != nil || len(refused) > 0 {
			b.Fatal(refused, err)
		}
	}
}

// appendTime is version 1's time: zero as one byte so unset times stay unset; others are seconds and
// nanoseconds since the epoch in UTC (the leader stamps UTC).
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// BenchmarkCodec is the codec's share of a transition: decode the record, encode it again, for a
// node with a full default-length history (20 entries).
func BenchmarkCodec(b *testing.B) {
	n := oddNodes()[1]
	n.History = n.History[:20]
	for _, c := range []struct {
		name string
		rec  []byte
	}{{"v1", encodeNodeV1(n)}, {"v2", encodeNode(n)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				got, err := decodeNode(n.Identity, c.rec)
				if err != nil {
					b.Fatal(err)
				}
				encodeNode(got)
			}
			b.ReportMetric(float64(len(c.rec)), "record-bytes")
		})
	}
}

// Every state the API knows is kept exactly, in the record's head and in its history; a state
// past the full 3-bit table (gone) is spelled out, so no code is ever reused or overflows.
func TestCodec_EveryAPIStateKeepsItsMeaning(t *testing.T) {
	for _, s := range api.NodeStates() {
		n := &Node{Identity: "n", Region: "eu", State: s, DiscoveredAt: t0,
			History: []Transition{{At: t0, From: api.StateLeased, To: s, Reason: "x"}, {At: t0, From: s, To: api.StateWaiting}}}
		enc := encodeNode(n)
		got, err := decodeNode(n.Identity, enc)
		if err != nil || !reflect.DeepEqual(got, n) {
			t.Fatalf("state %s: %v\n got %+v\nwant %+v", s, err, got, n)
		}
		if _, state, err := decodeNodeHead(enc); err != nil || state != s {
			t.Fatalf("head of a %s record = %q %v", s, state, err)
		}
		if h, _ := binary.Uvarint(enc[1:]); stateCode(s) == codeLiteral && (h&7 != codeLiteral || !bytes.Contains(enc, []byte(s))) {
			t.Fatalf("state %s is not spelled out: %x", s, enc)
		}
	}
	if stateCode(api.StateGone) != codeLiteral {
		t.Fatalf("gone has state code %d; the 3-bit table is full, it must be spelled out", stateCode(api.StateGone))
	}
}
