// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

// Stop while broadcasts keep arriving: nats.Conn.Close does not wait for a subscription's
// handler that is already running, so a handler that passed its stopped check may still start
// work. Stop must wait for all of it, and nothing may be answered or recorded after it returns
// (under -race, a WaitGroup grown while Stop waits on it is reported too).
func TestFleet_StopWhileRequestsArriveLeavesNothingRunning(t *testing.T) {
	// One node, so a broadcast's work ends quickly and the next request's handler is often
	// between its stopped check and starting work when Stop comes; it took up to 30 rounds.
	l := startLab(t, 1, nil, func(c *Config) { c.RecordDiscovery = true })
	fw := l.framework(t, "caller.mcollective")
	nc := l.natsConn(t, "caller.mcollective")
	for round := range 60 {
		if round > 0 {
			f, err := Start(t.Context(), l.fleet.cfg)
			if err != nil {
				t.Fatalf("round %d: start fleet: %v", round, err)
			}
			l.fleet = f
		}

		data, _ := signedRequest(t, fw, "discovery", "", []byte(`{"action":"ping","data":{}}`), nil)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				for range 4 {
					_ = nc.Publish("provisioning.broadcast.agent.discovery", data)
				}
				// a round trip paces the flood to what the broker takes
				_ = nc.Flush()
			}
		}()
		testkit.WaitFor(t, 30*time.Second, "the fleet to be answering", func() bool { return l.fleet.Stats().Replies > 50 })
		if err := l.fleet.Stop(); err != nil {
			t.Fatal(err)
		}
		replies := l.fleet.Stats().Replies
		recorded := l.logSize(t)
		// a straggler would act within milliseconds; give it a generous window to show up
		<-time.After(100 * time.Millisecond)
		close(done)
		wg.Wait()
		if got := l.fleet.Stats().Replies; got != replies {
			t.Fatalf("round %d: %d replies after Stop returned", round, got-replies)
		}
		if got := l.logSize(t); got != recorded {
			t.Fatalf("round %d: %d bytes of actions recorded after Stop returned", round, got-recorded)
		}
	}
}

// logSize is the size of the action log, which only grows.
func (l *testLab) logSize(t testing.TB) int64 {
	t.Helper()
	st, err := os.Stat(l.actions)
	if err != nil {
		t.Fatalf("action log: %v", err)
	}
	return st.Size()
}
