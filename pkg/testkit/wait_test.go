// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"testing"
	"time"
)

func TestReceive_ReturnsTheValueSent(t *testing.T) {
	ch := make(chan error, 1)
	go func() { ch <- nil }()
	if err := Receive(t, ch, 30*time.Second, "the send"); err != nil {
		t.Fatalf("received %v, want nil", err)
	}
	n := make(chan int, 1)
	n <- 7
	if got := Receive(t, n, time.Second, "the buffered value"); got != 7 {
		t.Fatalf("received %d, want 7", got)
	}
}
