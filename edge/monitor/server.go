// SPDX-License-Identifier: Apache-2.0

// Package monitor serves an edge's operational endpoints: /metrics (Prometheus), /healthz (the
// process answers), /readyz (the edge is running: subscribed and dispatching, and every check
// passes, such as the coordinators accepting its credential; with the pause, its own, the
// coordinators' and the leader election's), GET /pause, and the operator's POST /pause and /resume, which need the pause
// token as a bearer credential.
package monitor

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
)

// Edge is what the endpoints read and steer: Paused is the operator's pause through these
// endpoints, ClusterPaused the coordinators' (always false standalone), Election the edge's
// place in choria-provisioner's leader election ("" without leader_election, "leader" or
// "candidate").
type Edge interface {
	Ready() bool
	Paused() bool
	ClusterPaused() bool
	Election() string
	Pause()
	Resume()
}

// candidate is Election's answer while the edge campaigns and does not lead.
const candidate = "candidate"

// pauseState is what the endpoints say of the pause: paused while any holds, and which.
func pauseState(e Edge) map[string]any {
	here, cluster, election := e.Paused(), e.ClusterPaused(), e.Election() == candidate
	return map[string]any{"paused": here || cluster || election, "paused_here": here, "paused_by_coordinator": cluster,
		"paused_by_election": election}
}

// Check is a readiness condition besides the edge's own: an error says why the edge is not ready.
type Check func() error

// Handler builds the endpoints. With an empty token the pause endpoints answer 403: an
// unauthenticated pause would let anyone stop provisioning. /readyz answers 503 while e is not
// ready or any check fails, with the failing check's reason.
func Handler(e Edge, metrics http.Handler, token string, checks ...Check) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		body := map[string]any{"ok": true}
		if el := e.Election(); el != "" {
			body["election"] = el
		}
		writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !e.Ready() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false})
			return
		}
		for _, check := range checks {
			if err := check(); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ready": false, "reason": err.Error()})
				return
			}
		}
		body := pauseState(e)
		body["ready"] = true
		writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /pause", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, pauseState(e))
	})
	mux.HandleFunc("POST /pause", guarded(token, func(w http.ResponseWriter, _ *http.Request) {
		e.Pause()
		writeJSON(w, http.StatusOK, pauseState(e))
	}))
	// A resume here lifts only this edge's pause: the answer says if the coordinators' holds.
	mux.HandleFunc("POST /resume", guarded(token, func(w http.ResponseWriter, _ *http.Request) {
		e.Resume()
		writeJSON(w, http.StatusOK, pauseState(e))
	}))
	return mux
}

func guarded(token string, next http.HandlerFunc) http.HandlerFunc {
	// Digests of one size make the comparison take the same time whatever the presented
	// token's length; comparing the tokens themselves returns early on a length mismatch.
	want := sha256.Sum256([]byte(token))
	return func(w http.ResponseWriter, r *http.Request) {
		if token == "" {
			writeJSON(w, http.StatusForbidden, map[string]any{"error": "pause and resume are disabled: no pause_token is configured"})
			return
		}
		got, ok := bearer(r.Header.Get("Authorization"))
		presented := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(presented[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="muster-edge"`)
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "a valid bearer token is required"})
			return
		}
		next(w, r)
	}
}

// bearer returns the token of an Authorization header of the Bearer scheme, whose name is
// case-insensitive (RFC 7235 section 2.1).
func bearer(header string) (string, bool) {
	const scheme = "bearer "
	if len(header) <= len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return "", false
	}
	tok := strings.TrimLeft(header[len(scheme):], " ")
	return tok, tok != ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
