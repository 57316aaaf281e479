// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// PathEvents streams ledger transitions and operator actions (server-sent events).
const PathEvents = "/v1/events"

// Event kinds.
const (
	EventTransition = "transition" // a node changed state (an operator's ban or move included)
	EventForgotten  = "forgotten"  // an operator removed the node from the ledger
	// EventGrantsHeld says no node is offered until a time (Reason), after a recover; it names no node.
	EventGrantsHeld = "grants-held"
	// EventReset tells a reader that events before Index.Pos are gone from the log: it missed
	// some, and should read the nodes again.
	EventReset = "reset"
)

// Event is one ledger transition or operator action, at a position of the ledger's event log:
// the Raft index of the command that made it and its place within that command.
type Event struct {
	Index    uint64    `json:"index"`
	Pos      uint32    `json:"pos"`
	Kind     string    `json:"kind"`
	At       time.Time `json:"at"`
	Identity string    `json:"identity"`
	Region   string    `json:"region"`
	From     NodeState `json:"from,omitempty"`
	To       NodeState `json:"to"`
	Reason   string    `json:"reason,omitempty"`
	Edge     string    `json:"edge,omitempty"`
	LeaseID  string    `json:"lease_id,omitempty"`
}

// EventID is the event's position as an SSE id, "INDEX.POS": a reader resumes after it.
func (e Event) EventID() string { return fmt.Sprintf("%d.%d", e.Index, e.Pos) }

// EventPosition is a position in the event log; the zero value is before every event.
type EventPosition struct {
	Index uint64
	Pos   uint32
	// Whole means after every event of Index ("after=INDEX"), not only those up to Pos.
	Whole bool
}

// ParseEventPosition reads "INDEX" (after every event of that Raft index) or "INDEX.POS" (an
// event id: after that event).
func ParseEventPosition(s string) (EventPosition, error) {
	idx, pos, dotted := strings.Cut(s, ".")
	i, err := strconv.ParseUint(idx, 10, 64)
	if err != nil {
		return EventPosition{}, fmt.Errorf("event position %q: not INDEX or INDEX.POS", s)
	}
	if !dotted {
		return EventPosition{Index: i, Whole: true}, nil
	}
	p, err := strconv.ParseUint(pos, 10, 32)
	if err != nil {
		return EventPosition{}, fmt.Errorf("event position %q: not INDEX or INDEX.POS", s)
	}
	return EventPosition{Index: i, Pos: uint32(p)}, nil
}

// EventFilter narrows a stream to a region or a state a node entered; empty matches all.
type EventFilter struct {
	Region string
	State  NodeState
}

// Match reports whether e passes the filter.
func (f EventFilter) Match(e Event) bool {
	return (f.Region == "" || e.Region == f.Region) && (f.State == "" || e.To == f.State)
}

// eventStreamIdle is how long a reader waits for a byte (an event or the server's keep-alive
// every 15 s) before it takes the member for lost and resumes on another.
const eventStreamIdle = 45 * time.Second

// Events reads the event log after from, filtered, calling fn for each event in order, from any
// member (each serves its own log); a broken or silent stream resumes after the last event on
// the next member. With follow it runs until ctx ends or fn fails; without, it returns once a
// member has sent everything it holds. An EventReset, at the start or at any point of a stream
// (the reader fell behind the member's log), is passed to fn like any event, and reading goes on
// at the oldest event the log holds: fn should tell its user that events were missed. A member
// at its limit of streams answers 503 and the next member is tried.
func (c *Client) Events(ctx context.Context, from EventPosition, filter EventFilter, follow bool, fn func(Event) error) error {
	delay := c.delay
	for attempt := 0; ; attempt++ {
		member := c.candidates()[attempt%len(c.members)]
		done, err := c.eventStream(ctx, member, &from, filter, follow, fn)
		switch {
		case done:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		case !follow && attempt >= c.attempts:
			return fmt.Errorf("events: gave up after %d attempts: %w", attempt+1, err)
		}
		if err := Sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, 8*c.delay)
	}
}

// eventStream reads one stream from member, moving from on after each event; done says the
// call is over (fn failed, a refusal no member changes, or the end of a stream without follow).
func (c *Client) eventStream(ctx context.Context, member string, from *EventPosition, filter EventFilter, follow bool, fn func(Event) error) (bool, error) {
	q := url.Values{}
	if from.Index != 0 || from.Pos != 0 || from.Whole {
		if from.Whole {
			q.Set("after", strconv.FormatUint(from.Index, 10))
		} else {
			q.Set("after", fmt.Sprintf("%d.%d", from.Index, from.Pos))
		}
	}
	if filter.Region != "" {
		q.Set("region", filter.Region)
	}
	if filter.State != "" {
		q.Set("state", string(filter.State))
	}
	if !follow {
		q.Set("follow", "false")
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, member+PathEvents+"?"+q.Encode(), nil)
	if err != nil {
		return true, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
		e := answerError(resp, raw, member)
		return !retryable(e), e
	}
	// A silent member (no event, no keep-alive) is left for another.
	idle := time.AfterFunc(eventStreamIdle, cancel)
	defer idle.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var data []byte
	for sc.Scan() {
		idle.Reset(eventStreamIdle)
		line := sc.Bytes()
		switch {
		case len(line) == 0 && len(data) > 0:
			var e Event
			if err := json.Unmarshal(data, &e); err != nil {
				return false, fmt.Errorf("%s: event %q: %w", member, data, err)
			}
			data = data[:0]
			*from = EventPosition{Index: e.Index, Pos: e.Pos}
			if e.Kind == EventReset {
				// It names the oldest event the log holds, which comes next: resume at it.
				*from = justBefore(e.Index, e.Pos)
			}
			if err := fn(e); err != nil {
				return true, err
			}
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[len("data: "):]...)
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("%s: event stream: %w", member, err)
	}
	if !follow {
		return true, nil
	}
	return false, fmt.Errorf("%s: event stream ended", member)
}

// justBefore is the position right before event index.pos: reading after it starts at that event.
func justBefore(index uint64, pos uint32) EventPosition {
	if pos > 0 {
		return EventPosition{Index: index, Pos: pos - 1}
	}
	return EventPosition{Index: index - 1, Whole: true}
}
