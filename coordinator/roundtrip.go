// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/seed96588659/muster/coordinator/raftnode"
)

// Round trips to the other members: every interval this member times one request to each
// other member's API over its kept-alive connection, and keeps the least of the last few, as
// NTP keeps the shortest of its samples (queueing only ever adds). Raft's timeouts are judged
// against them: an election or heartbeat timeout of a few round trips makes elections flap.
const (
	defaultRoundTripInterval = 5 * time.Second
	roundTripSamples         = 4
	roundTripProbeTimeout    = 10 * time.Second
)

// roundTrips holds the last probes to each other member.
type roundTrips struct {
	mu      sync.Mutex
	samples map[string][]time.Duration
	// contacts is how the last probe of each member went, for status.
	contacts map[string]contact
}

// contact is what this member knows of reaching another: whether its last probe answered, and
// when (on the member's monotonic clock) it last heard from it (a probe's answer, or Raft).
type contact struct {
	probed, lastOK bool
	answered       time.Duration
	ever           bool
}

// heard records that id was heard from at at (Raft's contact with the leader), unless a later
// contact is known.
func (r *roundTrips) heard(id string, at time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.contacts == nil {
		r.contacts = map[string]contact{}
	}
	c := r.contacts[id]
	if !c.ever || at > c.answered {
		c.answered, c.ever = at, true
	}
	r.contacts[id] = c
}

// probed records how a probe of id that ended at now went.
func (r *roundTrips) probed(id string, ok bool, now time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.contacts == nil {
		r.contacts = map[string]contact{}
	}
	c := r.contacts[id]
	c.probed, c.lastOK = true, ok
	if ok && (!c.ever || now > c.answered) {
		c.answered, c.ever = now, true
	}
	r.contacts[id] = c
}

// contactOf is how the probes of id went; false before the first one ended.
func (r *roundTrips) contactOf(id string) (contact, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.contacts[id]
	return c, ok
}

func (r *roundTrips) add(id string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.samples == nil {
		r.samples = map[string][]time.Duration{}
	}
	s := append(r.samples[id], d)
	if len(s) > roundTripSamples {
		s = s[len(s)-roundTripSamples:]
	}
	r.samples[id] = s
}

// least is the shortest of the last probes to id; false before the first answered one.
func (r *roundTrips) least(id string) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.samples[id]
	if len(s) == 0 {
		return 0, false
	}
	return slices.Min(s), true
}

// probeRoundTrips times a request to every other member each interval until the member closes.
func (s *Service) probeRoundTrips() {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.closing
		cancel()
	}()
	t := time.NewTicker(s.cfg.RoundTripInterval)
	defer t.Stop()
	for {
		s.probeOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probeOnce times one request to each other member whose API address the ledger records, and
// notes when Raft last heard from the leader (status shows it once that leader is gone).
func (s *Service) probeOnce(ctx context.Context) {
	s.noteLeaderContact()
	addrs, err := s.ledger.Members()
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for id, addr := range addrs {
		if id == s.cfg.ID || addr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := s.timeRequest(ctx, addr)
			if ctx.Err() != nil {
				return // the member stops: no verdict on the other
			}
			s.rtt.probed(id, err == nil, s.clock.Monotonic())
			if err != nil {
				s.log.Debug("round trip probe", "peer", id, "error", err)
				return
			}
			s.rtt.add(id, d)
		}()
	}
	wg.Wait()
}

// timeRequest is the time from sending a request to addr's /healthz to its answer's first byte;
// any answer will do, only its timing is kept.
func (s *Service) timeRequest(ctx context.Context, addr string) (time.Duration, error) {
	pctx, cancel := context.WithTimeout(ctx, roundTripProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, addr+"/healthz", nil)
	if err != nil {
		return 0, fmt.Errorf("probe %s: %w", addr, err)
	}
	start := s.clock.Monotonic()
	resp, err := s.cfg.MemberClient.Do(req)
	took := s.clock.Monotonic() - start
	if err != nil {
		return 0, fmt.Errorf("probe %s: %w", addr, err)
	}
	// Drained so the connection is kept for the next probe (no handshake in its timing).
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return took, nil
}

// roundTripWarnings names the Raft timeouts that span fewer than raftnode.MinRoundTrips of the round trip
// measured to a member.
func (s *Service) roundTripWarnings(id string, rtt time.Duration) []string {
	var out []string
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"raft.heartbeat_timeout", s.node.HeartbeatTimeout()}, {"raft.election_timeout", s.node.ElectionTimeout()}} {
		if t.d < raftnode.MinRoundTrips*rtt {
			out = append(out, fmt.Sprintf("%s %s is under %d round trips to member %s (measured %s): elections may flap; raise it to at least %s",
				t.name, t.d, raftnode.MinRoundTrips, id, rtt.Round(time.Millisecond), (raftnode.MinRoundTrips*rtt).Round(time.Millisecond)))
		}
	}
	return out
}
