// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// keepAlive is how often an idle event stream sends a comment, so a reader (and any proxy on
// the way) can tell a quiet ledger from a dead connection, and a reader that stopped reading
// meets the write deadline even when the ledger is quiet.
const keepAlive = 15 * time.Second

// events streams the event log as server-sent events (text/event-stream): each event once, its
// id "INDEX.POS", resumable with Last-Event-ID or after=INDEX[.POS]; region and state filter it;
// follow=false ends the stream once it has caught up. Any member serves its own log (an admin
// read: the admin token or a reader's certificate), so a reader moves to another member and
// resumes after a change of leader.
func (s *Server) events() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, ok := s.getGuard(w, r, api.PathEvents, "after", "region", "state", "follow")
		if !ok {
			return
		}
		var from api.EventPosition
		after := q.Get("after")
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			after = id
		}
		if after != "" {
			p, err := api.ParseEventPosition(after)
			if err != nil {
				writeError(w, http.StatusBadRequest, api.CodeBadRequest, "after: "+err.Error(), "")
				return
			}
			from = p
		}
		filter := api.EventFilter{Region: q.Get("region"), State: api.NodeState(q.Get("state"))}
		if filter.State != "" && !filter.State.Valid() {
			writeError(w, http.StatusBadRequest, api.CodeBadRequest, fmt.Sprintf("state: %q is not one of %v", filter.State, api.NodeStates()), "")
			return
		}
		follow := q.Get("follow") != "false"
		// A place among the streams this member serves, or a refusal the reader can act on: the
		// client moves to another member on 503.
		select {
		case s.eventSlots <- struct{}{}:
			defer func() { <-s.eventSlots }()
		default:
			s.metrics.eventRefused.Inc()
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusServiceUnavailable, api.CodeUnavailable, fmt.Sprintf(
				"this member already serves %d event streams, its limit (http.max_event_readers): read from another member, or raise the limit", cap(s.eventSlots)), "")
			return
		}
		s.metrics.eventReaders.Inc()
		defer s.metrics.eventReaders.Dec()
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		rc := http.NewResponseController(w)
		// Each write gets its own deadline: a stream outlives the server's write timeout, which
		// bounds answers, but a reader that stops reading is cut and its place freed.
		var cut atomic.Bool
		write := func(format string, args ...any) error {
			_ = rc.SetWriteDeadline(time.Now().Add(s.eventTimeout))
			_, err := fmt.Fprintf(w, format, args...)
			if err == nil {
				err = rc.Flush()
			}
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					cut.Store(true)
				}
				cancel()
			}
			return err
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		_ = rc.SetWriteDeadline(time.Now().Add(s.eventTimeout))
		w.WriteHeader(http.StatusOK)
		if err := rc.Flush(); err != nil {
			s.log.Warn("event stream cannot flush", "error", err)
			return
		}
		// One writer at a time: the stream's events and the keep-alive comments.
		var mu sync.Mutex
		stop, stopped := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(stopped)
			tick := time.NewTicker(keepAlive)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					mu.Lock()
					err := write(": keep-alive\n\n")
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}
		}()
		err := s.svc.Events(ctx, from, filter, follow, func(e api.Event) error {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			return write("id: %s\nevent: %s\ndata: %s\n\n", e.EventID(), e.Kind, b)
		})
		close(stop)
		<-stopped
		switch {
		case cut.Load():
			s.metrics.eventCut.Inc()
			s.log.Warn("event stream cut: the reader took no write within http.event_write_timeout", "timeout", s.eventTimeout, "remote", r.RemoteAddr)
		case err != nil && r.Context().Err() == nil:
			s.log.Warn("event stream ended", "error", err)
		}
	})
}
