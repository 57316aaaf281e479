// SPDX-License-Identifier: Apache-2.0

package callhistory_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed96588659/muster/edge/callhistory"
	"github.com/seed96588659/muster/pkg/api"
)

// A call and its return are paired by run and seq, carry the request and the answer or the
// refusal's code, and the return is not before the call on the monotonic clock.
func TestWriter_RecordsCallsAndReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	w, err := callhistory.Open(path, "edge-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := w.Observe(api.CallRenew, api.RenewRequest{LeaseID: "l-1", Token: 7})
	done(api.RenewResponse{Lease: api.Lease{ID: "l-1", Token: 7, Nodes: []string{"a"}}}, nil)
	w.Observe(api.CallReport, api.ReportRequest{LeaseID: "l-1", Token: 7, RequestID: "r1"})(nil,
		&api.Error{Status: 404, Code: api.CodeUnknownLease, Message: "gone"})
	w.Observe(api.CallAcquire, api.AcquireRequest{RequestID: "q1"}) // never returns: the edge was killed
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	recs, off, err := callhistory.ReadFrom(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5: %+v", len(recs), recs)
	}
	call, ret := recs[0], recs[1]
	if call.Phase != callhistory.PhaseCall || ret.Phase != callhistory.PhaseReturn || call.Run != ret.Run || call.Seq != ret.Seq || call.Edge != "edge-1" {
		t.Errorf("renew records do not pair: %+v / %+v", call, ret)
	}
	if call.Mono == 0 || ret.Mono < call.Mono {
		t.Errorf("monotonic readings call %d return %d", call.Mono, ret.Mono)
	}
	var req api.RenewRequest
	var resp api.RenewResponse
	if json.Unmarshal(call.Request, &req) != nil || json.Unmarshal(ret.Response, &resp) != nil || req.Token != 7 || resp.Lease.Nodes[0] != "a" {
		t.Errorf("renew request %s answer %s", call.Request, ret.Response)
	}
	if refused := recs[3]; refused.Code != api.CodeUnknownLease || refused.Status != 404 || refused.Response != nil || refused.Error == "" {
		t.Errorf("refusal recorded as %+v", refused)
	}
	if recs[4].Kind != api.CallAcquire || recs[4].Phase != callhistory.PhaseCall {
		t.Errorf("last record %+v, want the unanswered acquire's call", recs[4])
	}

	// A restarted edge appends; a reader goes on from where it stopped, and leaves a line still
	// being written for the next read.
	w2, err := callhistory.Open(path, "edge-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	w2.Observe(api.CallRegister, api.RegisterRequest{Region: "eu"})
	_ = w2.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"run":"x","seq":1`)
	_ = f.Close()
	more, off2, err := callhistory.ReadFrom(path, off)
	if err != nil {
		t.Fatal(err)
	}
	if len(more) != 1 || more[0].Kind != api.CallRegister || more[0].Run == call.Run {
		t.Errorf("after the restart read %+v, want one register of another run", more)
	}
	if st, _ := os.Stat(path); off2 >= st.Size() {
		t.Errorf("offset %d covers the unfinished line (file %d bytes)", off2, st.Size())
	}
}
