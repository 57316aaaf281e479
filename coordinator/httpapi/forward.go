// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// headers a forwarded request keeps; everything else (cookies, hop-by-hop headers) stays here.
var forwardedRequestHeaders = []string{"Authorization", "Content-Type", "Accept", "User-Agent"}

// headers a forwarded answer keeps.
var forwardedResponseHeaders = []string{"Content-Type", api.HeaderLeader, "WWW-Authenticate", "X-Content-Type-Options"}

// toLeader serves a request this member cannot: it forwards it to the leader once, or answers
// 421 with the leader's address (redirect mode, an already forwarded request), or 503 without a leader.
func (s *Server) toLeader(w http.ResponseWriter, r *http.Request, route string, body []byte) {
	if u := s.tryLeader(w, r, route, body, 0); u != nil {
		writeError(w, u.status, u.code, u.msg, "")
	}
}

// unreachable is why a request could not be taken to the leader; nothing has been written.
type unreachable struct {
	status int
	code   api.Code
	msg    string
}

// tryLeader is toLeader that leaves the answer to its caller when no leader can be reached (none
// known, this member not ready yet, the forward failed before any answer): a read may then be
// served from this member's own copy. Any answer of the leader, and a redirect, is written.
// With firstByte > 0 the leader must begin its answer within it; its body is then copied in full.
func (s *Server) tryLeader(w http.ResponseWriter, r *http.Request, route string, body []byte, firstByte time.Duration) *unreachable {
	leader := s.svc.LeaderAPIAddress()
	if leader == "" {
		s.metrics.forwarded.WithLabelValues(route, "no_leader").Inc()
		return &unreachable{http.StatusServiceUnavailable, api.CodeNoLeader, "this member is not the leader and no leader is known; retry shortly"}
	}
	if leader == s.self {
		// Raft elected this member but it is still establishing leadership (barrier, lease
		// extension): nobody else can serve this either, so the client retries shortly.
		s.metrics.forwarded.WithLabelValues(route, "not_ready").Inc()
		return &unreachable{http.StatusServiceUnavailable, api.CodeUnavailable, "this member was just elected leader and is not ready yet; retry shortly"}
	}
	// A request the edge authenticated with its certificate is sent on only with this member's
	// proof; without an admin token to derive one from, the client is sent to the leader. An
	// admin's certificate is never sent on: the leader would see this member's certificate, and
	// no proof names an admin.
	if s.redirect || r.Header.Get(api.HeaderForwarded) != "" || (s.clientCerts && hasVerifiedClientCert(r) && !s.canVouch()) || s.adminByCert(r) {
		s.metrics.forwarded.WithLabelValues(route, "redirected").Inc()
		writeError(w, http.StatusMisdirectedRequest, api.CodeNotLeader, "this member is not the leader; the leader is "+leader, leader)
		return nil
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var wait *time.Timer
	if firstByte > 0 {
		wait = time.AfterFunc(firstByte, cancel)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, leader+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusInternalServerError, api.CodeInternal, fmt.Sprintf("forward to leader %s: %v", leader, err), leader)
		return nil
	}
	for _, h := range forwardedRequestHeaders {
		if v := r.Header.Values(h); len(v) > 0 {
			req.Header[h] = v
		}
	}
	req.Header.Set(api.HeaderForwarded, "1")
	if s.canVouch() {
		req.Header.Set(api.HeaderForwarded, s.proofs[0])
	}
	resp, err := s.fwd.Do(req)
	if wait != nil {
		// The answer has begun (or failed): copying it is not bounded.
		wait.Stop()
	}
	if err != nil {
		s.metrics.forwarded.WithLabelValues(route, "failed").Inc()
		return &unreachable{http.StatusBadGateway, api.CodeUnavailable, fmt.Sprintf("forward to leader %s failed: %v", leader, err)}
	}
	defer resp.Body.Close()
	s.metrics.forwarded.WithLabelValues(route, "ok").Inc()
	for _, h := range forwardedResponseHeaders {
		w.Header().Del(h)
		if v := resp.Header.Values(h); len(v) > 0 {
			w.Header()[h] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	return nil
}
