// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
)

// A member's profiles are off unless http.profiling turns them on; on, only the admin token
// opens them (not an edge token), a bad duration is refused by name, and a CPU and a heap
// profile come back in pprof's gzipped format.
func TestProfile_OnlyWhereTurnedOnAndOnlyForTheAdminToken(t *testing.T) {
	off := cluster(t, 1)[0]
	if code, eb, _ := do(t, http.MethodGet, off.url+api.PathProfileHeap, adminToken, ""); code != http.StatusNotFound || eb.Code != api.CodeNotFound {
		t.Fatalf("heap profile on a member without http.profiling: %d %+v", code, eb)
	}

	on := clusterWith(t, 1, func(c *httpapi.Config) { c.Profiling = true })[0]
	for _, c := range []struct {
		token, path string
		want        int
	}{
		{"", api.PathProfileHeap, http.StatusUnauthorized},
		{edgeToken, api.PathProfileCPU + "?seconds=1", http.StatusForbidden},
		{adminToken, api.PathProfileCPU + "?seconds=0", http.StatusBadRequest},
		{adminToken, api.PathProfileCPU + "?seconds=301", http.StatusBadRequest},
		{adminToken, api.PathProfileCPU + "?seconds=1&kind=x", http.StatusBadRequest},
	} {
		if code, eb, _ := do(t, http.MethodGet, on.url+c.path, c.token, ""); code != c.want {
			t.Errorf("GET %s with token %q: %d %+v, want %d", c.path, c.token, code, eb, c.want)
		}
	}
	if code, _, _ := do(t, http.MethodPost, on.url+api.PathProfileHeap, adminToken, ""); code != http.StatusMethodNotAllowed {
		t.Errorf("POST of the heap profile: %d, want 405", code)
	}

	for _, path := range []string{api.PathProfileCPU + "?seconds=1", api.PathProfileHeap} {
		body := getBody(t, on.url+path, adminToken)
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: not gzipped (pprof's format): %v", path, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil || len(raw) == 0 {
			t.Fatalf("%s: %d bytes of profile, %v", path, len(raw), err)
		}
	}
}

// getBody reads url with token and fails the test unless it answers 200.
func getBody(t *testing.T, url, token string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", url, resp.StatusCode, err, body)
	}
	return body
}
