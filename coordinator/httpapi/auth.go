// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
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

// identify is the admin r authenticates as: its bearer token's (the certificate is then not
// asked), else its verified client certificate's; false when neither names one.
func (s *Server) identify(r *http.Request) (caller, bool) {
	if tok := bearer(r); tok != "" {
		return s.adminByToken(tok)
	}
	if hasVerifiedClientCert(r) {
		return s.certAdmin(r.TLS.VerifiedChains[0][0].Subject.CommonName)
	}
	return caller{}, false
}

// authorizeAdmin checks the credential of an admin call on route and answers 401/403 itself: a
// bearer token names the admin (the certificate is then not asked), else a verified client
// certificate does; the admin's role must include the one route needs. The token never reaches
// a log line or an error message.
func (s *Server) authorizeAdmin(w http.ResponseWriter, r *http.Request, route string) (caller, bool) {
	if !s.hasAdmins() {
		writeError(w, http.StatusForbidden, api.CodeForbidden, "the admin API is disabled: no admin token is configured", "")
		return caller{}, false
	}
	tok := bearer(r)
	c, ok := s.identify(r)
	if !ok && tok != "" {
		if _, bound := s.boundToken(tok); bound || matchAny(tok, s.edgeTokens) {
			writeError(w, http.StatusForbidden, api.CodeForbidden, "an edge token does not open the admin API", "")
			return caller{}, false
		}
	}
	if !ok {
		// A missing token and a wrong one are told apart: the fix differs (send one; send the right one).
		msg := "the admin API needs the admin bearer token: the request carries none"
		if len(s.certAdmins) > 0 {
			msg += ", nor a client certificate named in auth.admins or auth.readers"
		}
		if tok != "" {
			msg = "the bearer token is not an admin token of this member (auth.admin_token, auth.admins)"
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="muster-admin"`)
		writeError(w, http.StatusUnauthorized, api.CodeUnauthorized, msg, "")
		return caller{}, false
	}
	if need := routeRole(route); !c.role.Includes(need) {
		writeError(w, http.StatusForbidden, api.CodeForbidden, fmt.Sprintf("%s needs role %s; %s has role %s (auth.admins)", route, need, c.name, c.role), "")
		return caller{}, false
	}
	return c, true
}

// authorizeEdge checks the credential of an edge call and answers 401/403 itself; it returns
// what the credential is bound to. A request may carry a bearer token and a
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
