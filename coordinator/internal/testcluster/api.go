// SPDX-License-Identifier: Apache-2.0

package testcluster

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seed96588659/muster/coordinator/httpapi"
)

// serveAPI starts m.API: the member's real HTTP API (httpapi over its running Service) on one
// loopback address for the whole test, as the API address recorded in the ledger stays across
// restarts. While the member is stopped it answers 503, as a member that is down fails a request.
func (m *Member) serveAPI(t testing.TB) {
	m.API = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := m.handler.Load()
		if h == nil {
			http.Error(w, "member stopped", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	m.URL = m.API.URL
	t.Cleanup(m.API.Close)
}

// startAPI points m.API at the API of the member's running service, configured by cfg.
func (m *Member) startAPI(t testing.TB, cfg httpapi.Config) {
	h, err := httpapi.New(m.Svc, cfg)
	if err != nil {
		t.Fatalf("api of %s: %v", m.ID, err)
	}
	m.handler.Store(h)
}
