// SPDX-License-Identifier: Apache-2.0

package statuspage_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator/statuspage"
	"github.com/seed96588659/muster/pkg/api"
)

func get(t *testing.T, h http.Handler, method, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestHandler_ServesThePageAndItsAssets(t *testing.T) {
	h := statuspage.Handler()
	for path, want := range map[string]struct{ ctype, text string }{
		"/status/":        {"text/html", `<script src="app.js"`},
		"/status/app.js":  {"text/javascript", "/v1/admin/status"},
		"/status/app.css": {"text/css", "#pause"},
	} {
		resp, body := get(t, h, http.MethodGet, path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, want.ctype) {
			t.Errorf("GET %s: content type %q, want %s", path, ct, want.ctype)
		}
		if !strings.Contains(body, want.text) {
			t.Errorf("GET %s lacks %q", path, want.text)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, d := range []string{"script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("GET %s: policy %q lacks %q", path, csp, d)
			}
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
	}
}

func TestHandler_RefusesWritesAndUnknownPaths(t *testing.T) {
	h := statuspage.Handler()
	if resp, _ := get(t, h, http.MethodPost, "/status/"); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	for _, p := range []string{"/status/nope.js", "/status/assets/app.js", "/status/../page.go"} {
		if resp, body := get(t, h, http.MethodGet, p); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMovedPermanently {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		} else if strings.Contains(body, "package statuspage") {
			t.Errorf("GET %s served Go source", p)
		}
	}
	if resp, _ := get(t, h, http.MethodGet, "/status"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != statuspage.Path {
		t.Errorf("GET /status: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestAssets_LoadNothingFromElsewhere reads every embedded asset for a reference to another
// origin: the page must work on a machine without internet access.
func TestAssets_LoadNothingFromElsewhere(t *testing.T) {
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//|@import|url\(\s*["']?(https?:)?//|fetch\(\s*["'](https?:)?//`)
	n := 0
	err := fs.WalkDir(statuspage.Assets(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := fs.ReadFile(statuspage.Assets(), path)
		if err != nil {
			return err
		}
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to another origin: %q", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("%d assets embedded, want index.html, app.js and app.css", n)
	}
}

// TestAssets_ShowEveryNodeState: the page's count table and charts list exactly the ledger's
// states in the API's order, and each has a colour.
func TestAssets_ShowEveryNodeState(t *testing.T) {
	js, err := fs.ReadFile(statuspage.Assets(), "app.js")
	if err != nil {
		t.Fatal(err)
	}
	css, err := fs.ReadFile(statuspage.Assets(), "app.css")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const STATES = \[([^\]]*)\]`).FindSubmatch(js)
	if m == nil {
		t.Fatal("app.js has no STATES list")
	}
	var got []string
	for _, q := range regexp.MustCompile(`'([a-z_]+)'`).FindAllSubmatch(m[1], -1) {
		got = append(got, string(q[1]))
	}
	var want []string
	for _, s := range api.NodeStates() {
		want = append(want, string(s))
		if !regexp.MustCompile(`\.s-` + string(s) + ` \{[^}]*color:`).Match(css) {
			t.Errorf("app.css has no colour for state %s", s)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("app.js STATES = %v, want api.NodeStates() %v", got, want)
	}
}

// TestAssets_ReadFailuresFromTheIndexNotTheNodes: the page reads recent failures from the
// ledger's failure index; the only node listing it asks for is filtered to the leased state (a
// bounded set), so no poll reads the whole ledger.
func TestAssets_ReadFailuresFromTheIndexNotTheNodes(t *testing.T) {
	b, err := fs.ReadFile(statuspage.Assets(), "app.js")
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	if !strings.Contains(js, "get('"+api.PathFailures+"'") {
		t.Errorf("app.js does not read %s", api.PathFailures)
	}
	calls := regexp.MustCompile(`get\('`+regexp.QuoteMeta(api.PathNodes)+`', (\w+)\)`).FindAllStringSubmatch(js, -1)
	if len(calls) != 1 {
		t.Fatalf("app.js lists nodes %d times, want once (the leases in flight)", len(calls))
	}
	if !regexp.MustCompile(`const ` + calls[0][1] + ` = \{ state: 'leased'`).MatchString(js) {
		t.Errorf("app.js's node listing is not filtered to the leased state")
	}
}
