// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"sync"
	"time"
)

// Responders counts the replies to one node's credential-making requests (jwt, gen25519,
// gencsr: CredentialAction) from their publish until the caller closes it, which it does once
// configure is sent. Nothing authenticates a server in provisioning mode, so any client of the
// provisioning broker can answer a node's requests: a second reply to one request means a
// second responder, and the key the caller holds may be a rogue's, whichever reply came first.
// A real node's slow reply arrives after a Conn's reply window, so Conn keeps counting the
// replies to a watched request past it (Request.Watch); a first reply to a try that had none is
// a slow node, not a second responder. Safe for concurrent use.
type Responders struct {
	now func() time.Time

	mu        sync.Mutex
	replies   map[string]int // request id -> replies seen
	duplicate string         // the action of the first request that got a second reply
	last      time.Time      // when the latest credential reply arrived
	forget    []func()
	closed    bool
}

// NewResponders starts watching one node's requests; now stamps the key replies (LastReply).
func NewResponders(now func() time.Time) *Responders {
	return &Responders{now: now, replies: make(map[string]int)}
}

// CredentialAction is true for the choria_provision actions whose reply carries a key the
// caller acts on: the ECDH key of jwt, the ed25519 key of gen25519 and the CSR of gencsr.
func CredentialAction(action string) bool {
	return action == "jwt" || action == "gen25519" || action == "gencsr"
}

// Duplicate names the action of the first watched request that got a second reply, "" if none.
func (w *Responders) Duplicate() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.duplicate
}

// LastReply is when the latest credential reply arrived, zero before any.
func (w *Responders) LastReply() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Close stops counting and lets the transport forget every watched request.
func (w *Responders) Close() {
	w.mu.Lock()
	forget := w.forget
	w.forget, w.closed = nil, true
	w.mu.Unlock()
	for _, f := range forget {
		f()
	}
}

// replied stamps the arrival of a credential reply the caller takes.
func (w *Responders) replied() {
	t := w.now()
	w.mu.Lock()
	w.last = t
	w.mu.Unlock()
}

// follow takes over request id of action after its reply window, in which n replies came:
// later ones are counted through late, and forget runs at Close. False, registering nothing,
// when already closed.
func (w *Responders) follow(id, action string, n int, forget func()) (late func(), ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, false
	}
	w.forget = append(w.forget, forget)
	w.countLocked(id, action, n)
	return func() { w.count(id, action) }, true
}

// count adds a late reply to request id of action.
func (w *Responders) count(id, action string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.countLocked(id, action, 1)
}

func (w *Responders) countLocked(id, action string, n int) {
	w.replies[id] += n
	if w.replies[id] > 1 && w.duplicate == "" {
		w.duplicate = action
	}
}
