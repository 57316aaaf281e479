// SPDX-License-Identifier: Apache-2.0

package hostflow

import (
	"sync"

	"github.com/choria-io/tokens"

	"github.com/seed96588659/muster/pkg/rpc"
)

// learnAfter is how many nodes in a row must show a JWT that does not demand signatures before
// the edge guesses the next node's first request needs none either.
const learnAfter = 16

// SigningPolicy decides which requests to a node are signed. RSA signing is most of an edge's
// CPU per request, and a provisioning-mode server verifies signatures only when its
// provisioning JWT says chs: true; the others never look at them, and the provisioning token in
// every choria_provision request still authenticates the edge. Under "auto" every request is
// signed until the node's JWT is read, and none after it unless the JWT demands them. Once
// learnAfter nodes in a row did not demand them, the first request of a new node is tried
// unsigned too (rpc.Node.TryUnsigned): a verifying node drops it unanswered, the next try is
// signed, and a verifying node resets the streak.
type SigningPolicy struct {
	mode rpc.Signing

	mu     sync.Mutex
	streak int
}

// NewSigningPolicy builds the policy for mode, the connection's own signing mode.
func NewSigningPolicy(mode rpc.Signing) *SigningPolicy {
	return &SigningPolicy{mode: mode}
}

// Guess reports whether a new node's first requests may go out unsigned on trust.
func (p *SigningPolicy) Guess() bool {
	if p.mode != rpc.SignAuto {
		return p.mode == rpc.SignNever
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.streak >= learnAfter
}

// Learn takes the node's provisioning JWT into account and says whether its later requests
// must be signed.
func (p *SigningPolicy) Learn(c *tokens.ProvisioningClaims) bool {
	switch p.mode {
	case rpc.SignAlways:
		return true
	case rpc.SignNever:
		return false
	}
	sign := c == nil || c.Secure
	p.mu.Lock()
	if sign {
		p.streak = 0
	} else {
		p.streak++
	}
	p.mu.Unlock()
	return sign
}
