// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/pkg/api"
)

// The API shows every field of a node the ledger records, except the provisioning lock; a field
// added to api.Node or api.Transition that toAPINode does not fill fails here.
func TestToAPINode_ShowsEveryRecordedField(t *testing.T) {
	at := time.Date(2001, 2, 3, 4, 5, 6, 7, time.UTC)
	n := &ledger.Node{
		Identity: "n1.example.net", Region: "eu", State: api.StateLeased, Attempts: 2, LeaseID: "l-1", LeaseToken: 9,
		Edge: "edge-a", InventoryVersion: "0.29.4", TargetVersion: "0.30.0", LastError: "boom", Facts: []byte(`{"a":1}`),
		DiscoveredAt: at, LeasedAt: at.Add(time.Second), FinishedAt: at.Add(2 * time.Second), NotBefore: at.Add(3 * time.Second),
		History: []ledger.Transition{{
			At: at, From: api.StateWaiting, To: api.StateLeased, Reason: "granted", Edge: "edge-a", LeaseID: "l-1", LeaseToken: 9, Error: "x",
		}},
		LockEdge: "edge-b", LockUntil: at.Add(time.Minute),
		HoldReason: api.HoldReprovision, HeldAt: at.Add(4 * time.Second), HoldEdge: "edge-c", HoldDetail: "provisioned before",
	}
	got := toAPINode(n)
	// Stale is not a field of the record: the read path sets it when a member answers from its
	// own copy without the leader (httpapi).
	if unset := slices.DeleteFunc(zeroFields(reflect.ValueOf(got), ""), func(f string) bool { return f == "Stale" }); len(unset) > 0 {
		t.Fatalf("toAPINode leaves %v unset", unset)
	}
	if unset := zeroFields(reflect.ValueOf(got.History[0]), "History[]."); len(unset) > 0 {
		t.Fatalf("toAPINode leaves %v unset", unset)
	}
	// Same names on the wire as in the record: the record as JSON, lock aside, is the API's node.
	var want, have map[string]any
	mustRoundTrip(t, n, &want)
	mustRoundTrip(t, got, &have)
	delete(want, "lock_edge")
	delete(want, "lock_until")
	// The hold's four fields are one object on the wire.
	want["hold"] = map[string]any{"reason": want["hold_reason"], "at": want["held_at"], "edge": want["hold_edge"], "detail": want["hold_detail"]}
	for _, k := range []string{"hold_reason", "held_at", "hold_edge", "hold_detail"} {
		delete(want, k)
	}
	if !reflect.DeepEqual(have, want) {
		t.Fatalf("api node:\n got %v\nwant %v", have, want)
	}
	if toAPINode(&ledger.Node{Identity: "bare"}).History != nil {
		t.Fatal("a node listed without history shows an empty one")
	}
}

func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			out = append(out, prefix+v.Type().Field(i).Name)
		}
	}
	return out
}

func mustRoundTrip(t *testing.T, v, into any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}
