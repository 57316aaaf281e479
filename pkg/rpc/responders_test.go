// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"testing"
	"time"
)

// TestResponders_ASecondReplyToOneRequestIsADuplicateWhenEverItComes: a second reply within the
// window or after it names the action; a first reply to a try that had none (a slow node) is
// not a duplicate; after Close every followed request is forgotten and nothing more counts.
func TestResponders_ASecondReplyToOneRequestIsADuplicateWhenEverItComes(t *testing.T) {
	at := time.Unix(1000, 0)
	w := NewResponders(func() time.Time { return at })
	forgotten := map[string]bool{}
	forget := func(id string) func() { return func() { forgotten[id] = true } }

	// jwt try 1 went unanswered, try 2 got one reply; try 1's late reply is the slow node's.
	late1, ok := w.follow("jwt-1", "jwt", 0, forget("jwt-1"))
	if !ok {
		t.Fatal("follow refused before Close")
	}
	if _, ok = w.follow("jwt-2", "jwt", 1, forget("jwt-2")); !ok {
		t.Fatal("follow refused before Close")
	}
	w.replied()
	late1()
	if d := w.Duplicate(); d != "" {
		t.Fatalf("a first late reply to an unanswered try counted as a duplicate of %s", d)
	}
	if !w.LastReply().Equal(at) {
		t.Fatalf("last reply %s, want %s", w.LastReply(), at)
	}

	// gencsr answered once in its window, again 200 ms later.
	lateCSR, _ := w.follow("csr-1", "gencsr", 1, forget("csr-1"))
	if d := w.Duplicate(); d != "" {
		t.Fatalf("one reply counted as a duplicate of %s", d)
	}
	lateCSR()
	if d := w.Duplicate(); d != "gencsr" {
		t.Fatalf("duplicate %q after a second gencsr reply, want gencsr", d)
	}
	late1() // a later duplicate does not rename the first
	if d := w.Duplicate(); d != "gencsr" {
		t.Fatalf("duplicate %q, want the first one's action, gencsr", d)
	}

	w.Close()
	for _, id := range []string{"jwt-1", "jwt-2", "csr-1"} {
		if !forgotten[id] {
			t.Errorf("%s not forgotten at Close", id)
		}
	}
	if _, ok := w.follow("late", "gencsr", 2, forget("late")); ok || forgotten["late"] {
		t.Fatal("a closed Responders took a request over")
	}

	// Two replies within one window are a duplicate at once.
	w2 := NewResponders(time.Now)
	w2.follow("g", "gen25519", 2, func() {})
	if d := w2.Duplicate(); d != "gen25519" {
		t.Fatalf("two replies in the window: duplicate %q, want gen25519", d)
	}
}
