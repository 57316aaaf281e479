// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// Every member that applied the same log answers the same fingerprint; a member at another index
// answers another digest (the chaos suite compares them after every round), and the status
// without the parameter reads no ledger at all.
func TestStatus_FingerprintsAgreeAtTheSameIndex(t *testing.T) {
	ms := cluster(t, 3)
	ctx := ctxT(t)
	admin := adminClient(t, ms[0].url)
	prints := func() []api.Fingerprint {
		var out []api.Fingerprint
		for _, m := range ms {
			fp, err := admin.FingerprintOf(ctx, m.url)
			if err != nil {
				t.Fatalf("fingerprint of %s: %v", m.id, err)
			}
			out = append(out, fp)
		}
		return out
	}
	agree := func(what string) api.Fingerprint {
		var fps []api.Fingerprint
		testkit.WaitFor(t, 30*time.Second, "every member at the same index "+what, func() (bool, string) {
			fps = prints()
			return fps[0].AppliedIndex == fps[1].AppliedIndex && fps[1].AppliedIndex == fps[2].AppliedIndex, fmt.Sprint(fps)
		})
		for i, fp := range fps {
			if b, err := hex.DecodeString(fp.Digest); err != nil || len(b) != 32 {
				t.Fatalf("%s's digest %q is not a sha256 in hex", ms[i].id, fp.Digest)
			}
			if fp != fps[0] {
				t.Fatalf("%s: %s answers %+v, %s %+v", what, ms[i].id, fp, ms[0].id, fps[0])
			}
		}
		return fps[0]
	}
	before := agree("before a registration")
	if _, err := edgeClient(t, ms[0].url).Register(ctx, api.RegisterRequest{Region: "ams", Edge: "e1", Nodes: []api.RegisterNode{{Identity: "n1"}}}); err != nil {
		t.Fatal(err)
	}
	after := agree("after a registration")
	if after.AppliedIndex <= before.AppliedIndex || after.Digest == before.Digest {
		t.Fatalf("the registration moved nothing: before %+v, after %+v", before, after)
	}
	var st api.StatusResponse
	if code := getJSON(t, ms[1].url, api.PathStatus, &st); code != http.StatusOK || st.Ledger != nil {
		t.Fatalf("status without fingerprint=true: %d, ledger %+v, want none", code, st.Ledger)
	}
	if code, body, _ := do(t, http.MethodGet, ms[1].url+api.PathStatus+"?fingerprint=maybe", adminToken, ""); code != http.StatusBadRequest {
		t.Fatalf("fingerprint=maybe: %d %+v, want 400", code, body)
	}
	// Every read of the ledger costs a whole scan: an edge's credential, or none, gets none.
	for _, c := range []struct {
		name, token string
		want        int
	}{{"an edge token", edgeToken, http.StatusForbidden}, {"no token", "", http.StatusUnauthorized}} {
		if code, body, _ := do(t, http.MethodGet, ms[1].url+api.PathStatus+"?fingerprint=true", c.token, ""); code != c.want {
			t.Fatalf("fingerprint with %s: %d %+v, want %d", c.name, code, body, c.want)
		}
	}
}
