// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"net/http"
	"net/url"
	"runtime/pprof"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// profileCPU answers a CPU profile of this member over ?seconds=, for the admin token: where a
// member's time goes under a real load (an operator's question, and the cluster benchmarks').
// Go's own handler refuses a profile longer than the server's write timeout; this one lifts the
// deadline for its answer, as the event stream does.
func (s *Server) profileCPU() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.profileGuard(w, r, api.PathProfileCPU, "seconds")
		if !ok {
			return
		}
		secs, ok := wholeNumber(w, q, "seconds", 30, api.MaxProfileSeconds)
		if !ok {
			return
		}
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="cpu.pprof"`)
		// Only one CPU profile runs in a process at a time; the start fails before writing.
		if err := pprof.StartCPUProfile(w); err != nil {
			writeError(w, http.StatusConflict, api.CodeConflict, "a CPU profile is already running on this member: "+err.Error(), "")
			return
		}
		t := time.NewTimer(time.Duration(secs) * time.Second)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
		pprof.StopCPUProfile()
	})
}

// profileHeap answers a heap profile of this member, for the admin token.
func (s *Server) profileHeap() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.profileGuard(w, r, api.PathProfileHeap); !ok {
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="heap.pprof"`)
		if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
			s.log.Warn("heap profile", "error", err)
		}
	})
}

// profileGuard lets a profile through only where profiling is on, as a GET of an admin of role
// admin (never a reader: a profile is not a ledger read).
func (s *Server) profileGuard(w http.ResponseWriter, r *http.Request, route string, allowed ...string) (url.Values, bool) {
	if !s.profiling {
		writeError(w, http.StatusNotFound, api.CodeNotFound, route+" is off on this member (http.profiling)", "")
		return nil, false
	}
	return s.getGuard(w, r, route, allowed...)
}
