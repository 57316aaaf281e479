// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/seed96588659/muster/pkg/api"
)

// secret is a token kept only as its SHA-256, so comparison time depends on neither its length nor its content.
type secret [sha256.Size]byte

func newSecret(token string) secret { return sha256.Sum256([]byte(token)) }

// matchAny compares the presented token with every configured one, without stopping early.
func matchAny(presented string, tokens []secret) bool {
	p := newSecret(presented)
	ok := 0
	for _, t := range tokens {
		ok |= subtle.ConstantTimeCompare(p[:], t[:])
	}
	return ok == 1
}

// bearer returns the bearer token of the request, or "" when there is none.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return ""
	}
	return strings.TrimSpace(h[len(prefix):])
}

// hasVerifiedClientCert reports whether the TLS handshake verified a client certificate against the CA.
func hasVerifiedClientCert(r *http.Request) bool {
	return r.TLS != nil && len(r.TLS.VerifiedChains) > 0
}

// authorize checks the credential for an edge or admin endpoint and answers 401/403 itself; for
// an edge endpoint it returns what the credential is bound to. The token never reaches a log
// line or an error message.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, admin bool) (binding, bool) {
	tok := bearer(r)
	if !admin {
		return s.authorizeEdge(w, r, tok)
	}
	if len(s.adminTokens) == 0 {
		writeError(w, http.StatusForbidden, api.CodeForbidden, "the admin API is disabled: no admin token is configured", "")
		return binding{}, false
	}
	if tok != "" && matchAny(tok, s.adminTokens) {
		return binding{any: true}, true
	}
	if _, bound := s.boundToken(tok); tok != "" && (bound || matchAny(tok, s.edgeTokens)) {
		writeError(w, http.StatusForbidden, api.CodeForbidden, "an edge token does not open the admin API", "")
		return binding{}, false
	}
	// A missing token and a wrong one are told apart: the fix differs (send one; send the right one).
	msg := "the admin API needs the admin bearer token: the request carries none"
	if tok != "" {
		msg = "the bearer token is not the admin token (auth.admin_token) of this member"
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="muster-admin"`)
	writeError(w, http.StatusUnauthorized, api.CodeUnauthorized, msg, "")
	return binding{}, false
}

// authorizeEdge is authorize for an edge endpoint. A request may carry a bearer token and a
// client certificate: a token that matches nothing is refused whatever certificate comes with
// it, and when both are valid the request gets only what both allow (agree). Letting either one
// win would let the weaker credential widen the other: any certificate of the CA (the status
// page's) would widen a token bound to one region, or a token another edge's certificate.
func (s *Server) authorizeEdge(w http.ResponseWriter, r *http.Request, tok string) (binding, bool) {
	var byToken *binding
	if tok != "" {
		b, ok := s.tokenBinding(tok)
		if !ok && !s.insecure {
			w.Header().Set("WWW-Authenticate", `Bearer realm="muster-edge"`)
			writeError(w, http.StatusUnauthorized, api.CodeUnauthorized, "the bearer token is not a valid edge token", "")
			return binding{}, false
		}
		if !ok {
			return binding{any: true}, true
		}
		byToken = &b
	}
	if s.clientCerts && hasVerifiedClientCert(r) {
		byCert := s.certBinding(r)
		if byToken == nil {
			return byCert, true
		}
		b, err := agree(*byToken, byCert)
		if err != nil {
			writeError(w, http.StatusForbidden, api.CodeWrongEdge, err.Error(), "")
			return binding{}, false
		}
		return b, true
	}
	if byToken != nil {
		return *byToken, true
	}
	if s.insecure {
		return binding{any: true}, true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="muster-edge"`)
	msg := "the edge API needs an edge bearer token"
	if s.clientCerts {
		msg = "the edge API needs a client certificate signed by the configured CA or an edge bearer token"
	}
	writeError(w, http.StatusUnauthorized, api.CodeUnauthorized, msg, "")
	return binding{}, false
}

// authorized drops the binding of an authorize answer: reads are not scoped to an edge.
func authorized(_ binding, ok bool) bool { return ok }
