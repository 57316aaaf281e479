// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
)

// testAdminToken opens the admin API of members that serve one (serveAPIs); the leader reads
// the others' protocol with it.
const testAdminToken = "test-admin-token"

// apiFront serves a member's real HTTP API (httpapi over its running Service) on one loopback
// address for the whole test, as the API address recorded in the ledger stays across restarts.
// While the member is stopped it answers 503, as a member that is down fails a request.
type apiFront struct {
	srv *httptest.Server
	h   atomic.Pointer[httpapi.Server]
}

func newAPIFront(t testing.TB) *apiFront {
	f := &apiFront{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := f.h.Load()
		if h == nil {
			http.Error(w, "member stopped", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *apiFront) url() string { return f.srv.URL }

// serve points the front at svc's API; nil stops serving.
func (f *apiFront) serve(t testing.TB, svc *coordinator.Service) {
	if svc == nil {
		f.h.Store(nil)
		return
	}
	h, err := httpapi.New(svc, httpapi.Config{AdminTokens: []string{testAdminToken}, EdgeTokens: []string{"test-edge-token"}, Self: f.url(), Errors: coordinator.HTTPErrors()})
	if err != nil {
		t.Fatalf("api of %s: %v", svc.ID(), err)
	}
	f.h.Store(h)
}

// serveAPIs gives every member a real API on loopback (call before starting any): the recorded
// API addresses are then reachable, as the leader's protocol monitor needs.
func (c *cluster) serveAPIs() {
	c.apis = map[string]*apiFront{}
	for _, m := range c.members {
		c.apis[m.id] = newAPIFront(c.t)
	}
}

// apiAddress is the API base URL member id records: its front, or an unreachable name.
func (c *cluster) apiAddress(id string) string {
	if f := c.apis[id]; f != nil {
		return f.url()
	}
	return "http://" + id + ".invalid"
}
