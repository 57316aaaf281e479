// SPDX-License-Identifier: Apache-2.0

package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// An answer with a queue encodes both counts even when they are zero (an empty region is news
// to the edge); one without encodes no queue key, and an old coordinator's answer decodes to nil.
func TestRegionQueue_ZerosSentAbsenceKeptApart(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"acquire with zeros", AcquireResponse{Queue: &RegionQueue{}}, `"queue":{"waiting":0,"leased":0}`},
		{"acquire with counts", AcquireResponse{Queue: &RegionQueue{Waiting: 7, Leased: 3}}, `"queue":{"waiting":7,"leased":3}`},
		{"heartbeat with counts", HeartbeatResponse{Time: time.Unix(0, 0).UTC(), Queue: &RegionQueue{Waiting: 1}}, `"queue":{"waiting":1,"leased":0}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s encoded %s, want it to contain %s", c.name, b, c.want)
		}
	}
	for _, v := range []any{AcquireResponse{}, HeartbeatResponse{}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "queue") {
			t.Errorf("an answer without a queue encoded one: %s", b)
		}
	}

	var hb HeartbeatResponse
	if err := json.Unmarshal([]byte(`{"paused":false,"leader":"http://c1","time":"2026-01-02T03:04:05Z"}`), &hb); err != nil {
		t.Fatal(err)
	}
	if hb.Queue != nil {
		t.Errorf("an old coordinator's heartbeat decoded a queue: %+v", *hb.Queue)
	}
	var ar AcquireResponse
	if err := json.Unmarshal([]byte(`{"paused":false,"queue":{"waiting":0,"leased":4}}`), &ar); err != nil {
		t.Fatal(err)
	}
	if ar.Queue == nil || *ar.Queue != (RegionQueue{Leased: 4}) {
		t.Errorf("acquire queue decoded as %+v", ar.Queue)
	}
}
