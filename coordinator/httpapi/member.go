// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"

	"github.com/seed96588659/muster/pkg/api"
)

// Why a proof on forwarded requests: a follower forwards an edge's request with its own member
// certificate, having checked the edge's binding itself, and the leader then lets the request act
// as any edge. Every certificate of the cluster's CA verifies, so the leader must tell a member
// from any other holder of such a certificate (an operator's status-page certificate) that sets
// the forwarded header itself. Members share the admin token: a forward carries a value derived
// from it (never the token itself), which only members can produce.

// forwardProofs derives the value a member's forward carries from each admin token; the first is
// the one this member sends, any of them is accepted (tokens being rotated).
func forwardProofs(tokens []string) []string {
	out := make([]string, 0, len(tokens))
	for _, t := range tokens {
		mac := hmac.New(sha256.New, []byte(t))
		mac.Write([]byte("muster forwarded request v1"))
		out = append(out, hex.EncodeToString(mac.Sum(nil)))
	}
	return out
}

// fromMember is true when r carries a member's forward proof.
func (s *Server) fromMember(r *http.Request) bool {
	got := r.Header.Get(api.HeaderForwarded)
	ok := 0
	for _, p := range s.proofs {
		ok |= subtle.ConstantTimeCompare([]byte(got), []byte(p))
	}
	return ok == 1 && got != ""
}

// canVouch is true when this member can forward a request the leader authenticates by its
// proof alone (an edge's client certificate, which the forward cannot carry).
func (s *Server) canVouch() bool { return len(s.proofs) > 0 }
