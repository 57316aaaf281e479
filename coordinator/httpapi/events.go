// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// keepAlive is how often an idle event stream sends a comment, so a reader (and any proxy on
// the way) can tell a quiet ledger from a dead connection.
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
		rc := http.NewResponseController(w)
		// A stream outlives the server's write timeout, which bounds answers, not streams.
		_ = rc.SetWriteDeadline(time.Time{})
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if err := rc.Flush(); err != nil {
			s.log.Warn("event stream cannot flush", "error", err)
			return
		}
		if s.metrics != nil {
			s.metrics.eventReaders.Inc()
			defer s.metrics.eventReaders.Dec()
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
					_, _ = fmt.Fprint(w, ": keep-alive\n\n")
					_ = rc.Flush()
					mu.Unlock()
				}
			}
		}()
		err := s.svc.Events(r.Context(), from, filter, follow, func(e api.Event) error {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", e.EventID(), e.Kind, b); err != nil {
				return err
			}
			return rc.Flush()
		})
		close(stop)
		<-stopped
		if err != nil && r.Context().Err() == nil {
			s.log.Warn("event stream ended", "error", err)
		}
	})
}
