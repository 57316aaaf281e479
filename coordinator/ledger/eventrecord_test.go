// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
)

// Every event the ledger writes, and any kind, state or reason it may write later, reads back
// from its binary record as it went in, index and position from the key.
func TestEventRecord_ReadsBackWhatWasWritten(t *testing.T) {
	at := time.Date(2026, 12, 3, 1, 2, 3, 456789012, time.UTC)
	for _, e := range []api.Event{
		{Kind: api.EventTransition, At: at, Identity: "n1.example.net", Region: "eu", To: api.StateWaiting, Reason: "discovered", Edge: "edge-a"},
		{Kind: api.EventTransition, At: at, Identity: "n1.example.net", Region: "eu", From: api.StateWaiting, To: api.StateLeased, Reason: "granted", Edge: "edge-a", LeaseID: "edge-a/eu/req-1"},
		{Kind: api.EventForgotten, At: at, Identity: "n2", Region: "us", From: api.StateProvisioned, Reason: "forgotten by admin: decommissioned"},
		{Kind: "a-kind-of-later", At: at, Identity: "n3", Region: "ap", From: "a-state-of-later", To: "another", Reason: "", Edge: "e", LeaseID: "l"},
		{Kind: api.EventTransition, Identity: "n4", Region: "eu", To: api.StateWaiting}, // no time
	} {
		e.Index, e.Pos = 1<<40+7, 3
		v := encodeEvent(&e)
		if v[0] != eventFormatV1 {
			t.Fatalf("record of %+v starts with %d", e, v[0])
		}
		got, err := decodeEvent(logKey(e.Index, e.Pos), v)
		if err != nil {
			t.Fatalf("decode %+v: %v", e, err)
		}
		if want := mustJSON(t, e); mustJSON(t, got) != want {
			t.Fatalf("read back\n%s\nwant\n%s", mustJSON(t, got), want)
		}
		if j := mustJSON(t, e); len(v) >= len(j)/2 {
			t.Errorf("record of %d bytes for a JSON event of %d: the point of the record is to be small", len(v), len(j))
		}
	}
}

// A damaged event record is an error that says what is wrong, never a panic or a wrong event.
func TestEventRecord_RefusesADamagedRecord(t *testing.T) {
	e := api.Event{Kind: api.EventTransition, At: time.Unix(1e9, 5).UTC(), Identity: "n1", Region: "eu", From: api.StateWaiting, To: api.StateLeased, Reason: "granted", Edge: "edge-a", LeaseID: "l1"}
	good := encodeEvent(&e)
	key := logKey(9, 0)
	cases := map[string]struct {
		k, v []byte
		want string
	}{
		"empty":           {key, nil, "empty event record"},
		"unknown format":  {key, append([]byte{9}, good[1:]...), "unknown event record format 9"},
		"trailing bytes":  {key, append(bytes.Clone(good), 0), "trailing bytes"},
		"unknown kind":    {key, append([]byte{eventFormatV1, 2 * 9}, good[2:]...), "unknown event kind code 9"},
		"short key":       {key[:8], good, "event key of 8 bytes"},
		"bad JSON":        {key, []byte(`{"kind":`), "unexpected end of JSON input"},
		"lease token set": {key, withToken(e), "lease token"},
	}
	for i := 1; i < len(good); i++ {
		cases[fmt.Sprintf("cut at %d", i)] = struct {
			k, v []byte
			want string
		}{key, good[:i], ""}
	}
	for name, c := range cases {
		_, err := decodeEvent(c.k, c.v)
		if err == nil {
			t.Errorf("%s: decoded", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want it to say %q", name, err, c.want)
		}
	}
}

// withToken is e's record with a lease token in its history entry, which no event carries.
func withToken(e api.Event) []byte {
	return eventRecord(e.Kind, e.Identity, e.Region, &Transition{At: e.At, From: e.From, To: e.To, Reason: e.Reason, Edge: e.Edge, LeaseID: e.LeaseID, LeaseToken: 7})
}

// Members write events as JSON until the cluster protocol rises to eventRecordProtocol, and as
// records from the entry that raised it: a log written across the rise reads in order, and two
// members fed the same log hold the same bytes.
func TestEvents_RecordsFromTheirProtocolAndJSONBefore(t *testing.T) {
	run := func() *harness {
		h := newHarnessAt(t, eventRecordProtocol-1)
		h.register(t0, "eu", "a")
		mustResult[*ProtocolResult](t, h.apply(&SetProtocol{Version: eventRecordProtocol}))
		h.grant(t0.Add(time.Second), "edge-a", "eu", 1)
		return h
	}
	h, twin := run(), run()
	var raw [][]byte
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEvents).ForEach(func(_, v []byte) error {
			raw = append(raw, bytes.Clone(v))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 2 || raw[0][0] != '{' || raw[1][0] != eventFormatV1 {
		t.Fatalf("stored events %q: want the one before the rise as JSON and the one after as a record", raw)
	}
	es, _, err := h.l.Events(api.EventPosition{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventTrail(es); len(got) != 2 || got[0] != "a:>waiting" || got[1] != "a:waiting>leased" || es[1].Edge != "edge-a" || es[1].LeaseID == "" {
		t.Fatalf("events %+v", es)
	}
	d1, _ := h.l.Digest()
	d2, _ := twin.l.Digest()
	if !bytes.Equal(d1, d2) {
		t.Fatal("two ledgers fed the same log hold different events")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
