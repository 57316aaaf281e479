// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Page sizes of the node listing.
const (
	defaultNodesLimit = 500
	maxNodesLimit     = 10000
)

// getGuard checks method, admin credential and role, and the query parameters a read accepts.
func (s *Server) getGuard(w http.ResponseWriter, r *http.Request, route string, allowed ...string) (url.Values, bool) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, fmt.Sprintf("%s needs GET, not %s", route, r.Method), "")
		return nil, false
	}
	if _, ok := s.authorizeAdmin(w, r, route); !ok {
		return nil, false
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("query: %v", err), "")
		return nil, false
	}
	for k, v := range q {
		if !slices.Contains(allowed, k) {
			writeError(w, http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("query parameter %q is not accepted by %s (accepted: %v)", k, route, allowed), "")
			return nil, false
		}
		if len(v) > 1 {
			writeError(w, http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("query parameter %q is given %d times", k, len(v)), "")
			return nil, false
		}
	}
	return q, true
}

// wholeNumber reads the query parameter name as a whole number from 1 to max, def when it is
// absent; a bad value is answered 400 and ok is false.
func wholeNumber(w http.ResponseWriter, q url.Values, name string, def, max int) (n int, ok bool) {
	v := q.Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		writeError(w, http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("query parameter %s: %q is not a whole number from 1 to %d", name, v, max), "")
		return 0, false
	}
	return n, true
}

// boolParam reads the query parameter name as true or false (false when absent); a bad value is
// answered 400 and ok is false.
func boolParam(w http.ResponseWriter, q url.Values, name string) (v, ok bool) {
	s := q.Get(name)
	if s == "" {
		return false, true
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		writeError(w, http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("query parameter %s: %q is not true or false", name, s), "")
		return false, false
	}
	return b, true
}

// status answers with this member's own view: it must work without a leader, to show there is none.
func (s *Server) status() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.getGuard(w, r, api.PathStatus, "fingerprint")
		if !ok {
			return
		}
		fp, ok := boolParam(w, q, "fingerprint")
		if !ok {
			return
		}
		st, err := s.svc.Status(r.Context())
		if err == nil && fp {
			st.Ledger = &api.Fingerprint{}
			st.Ledger.AppliedIndex, st.Ledger.Digest, err = s.svc.Fingerprint()
		}
		if err != nil {
			s.fail(w, r, api.PathStatus, nil, err)
			return
		}
		if c, ok := s.identify(r); ok {
			st.Caller = &api.Caller{Name: c.name, Role: c.role}
		}
		writeJSON(w, http.StatusOK, st)
	})
}

// nodes lists nodes, read on the leader unless stale=true.
func (s *Server) nodes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.getGuard(w, r, api.PathNodes, "region", "state", "after", "limit", "stale")
		if !ok {
			return
		}
		f := api.NodeFilter{Region: q.Get("region"), State: api.NodeState(q.Get("state")), After: q.Get("after")}
		if f.Limit, ok = wholeNumber(w, q, "limit", defaultNodesLimit, maxNodesLimit); !ok {
			return
		}
		if err := f.Validate(); err != nil {
			writeError(w, http.StatusBadRequest, api.CodeBadRequest, "query parameter "+err.Error(), "")
			return
		}
		st, here := s.servedHere(w, r, q, api.PathNodes)
		if !here {
			return
		}
		out, err := s.svc.Nodes(r.Context(), f)
		if err != nil {
			s.fail(w, r, api.PathNodes, nil, err)
			return
		}
		out.Stale = st
		if out.Nodes == nil {
			out.Nodes = []api.Node{}
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// failures lists the ledger's recent failures, newest first, read on the leader unless stale=true.
// It reads the failure index only, so the status page may poll it at any ledger size.
func (s *Server) failures() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.getGuard(w, r, api.PathFailures, "limit", "stale")
		if !ok {
			return
		}
		limit, ok := wholeNumber(w, q, "limit", api.DefaultFailures, api.MaxFailures)
		if !ok {
			return
		}
		st, here := s.servedHere(w, r, q, api.PathFailures)
		if !here {
			return
		}
		out, err := s.svc.Failures(r.Context(), limit)
		if err != nil {
			s.fail(w, r, api.PathFailures, nil, err)
			return
		}
		out.Stale = st
		writeJSON(w, http.StatusOK, out)
	})
}

// node returns one node with its history, read on the leader unless stale=true.
func (s *Server) node() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.getGuard(w, r, api.PathNode+"{identity}", "stale")
		if !ok {
			return
		}
		id := r.PathValue("identity")
		if err := api.ValidateName("identity", id); err != nil {
			writeError(w, http.StatusBadRequest, api.CodeBadRequest, err.Error(), "")
			return
		}
		st, here := s.servedHere(w, r, q, api.PathNode+"{identity}")
		if !here {
			return
		}
		n, err := s.svc.Node(r.Context(), id)
		if err != nil {
			s.fail(w, r, api.PathNode+"{identity}", nil, err)
			return
		}
		n.Stale = st
		writeJSON(w, http.StatusOK, n)
	})
}

// readLeaderWait bounds how long a read waits for the leader's answer to begin before this
// member answers from its own copy: a leader across a cut link may never answer at all.
const readLeaderWait = 5 * time.Second

// servedHere is true when this member answers a read itself, with what it says of its copy's
// staleness (nil on the leader). The leader answers every read; another member forwards it to
// the leader (or redirects the client there), and answers itself, marked stale, when the caller
// asked for stale=true or no leader could be reached: an operator cut off from the quorum is
// answered, never refused. False when it has answered already (forwarded, redirected, or a bad
// stale value refused).
func (s *Server) servedHere(w http.ResponseWriter, r *http.Request, q url.Values, route string) (*api.Staleness, bool) {
	local, ok := boolParam(w, q, "stale") // the caller accepts this member's own, possibly lagging, copy
	if !ok {
		return nil, false
	}
	if s.svc.IsLeader() {
		return nil, true
	}
	reason := "asked for (stale=true)"
	if !local && s.adminByCert(r) {
		// A forward would reach the leader with this member's certificate, not the caller's.
		local, reason = true, "asked with a client certificate, which a forward to the leader cannot carry: ask the leader itself for its copy"
	}
	if !local {
		u := s.tryLeader(w, r, route, nil, readLeaderWait)
		if u == nil {
			return nil, false
		}
		if r.Context().Err() != nil {
			writeError(w, u.status, u.code, u.msg, "")
			return nil, false
		}
		s.metrics.forwarded.WithLabelValues(route, "served_stale").Inc()
		reason = "no leader reachable: " + u.msg
	}
	st := s.svc.Staleness()
	st.Reason = reason
	return &st, true
}
