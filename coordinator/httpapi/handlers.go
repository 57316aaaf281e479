// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/seed96588659/muster/pkg/api"
)

// validator is implemented by every request type of pkg/api.
type validator interface{ Validate() error }

// endpoint describes how one POST route is guarded.
type endpoint struct {
	route   string
	admin   bool // an admin credential (of the role routeRole names) instead of an edge credential
	emptyOK bool // an empty body means the zero request
}

// postJSON builds a leader-only POST endpoint: method, credential, size limit, strict decoding and
// validation are checked on the member that received the request, then it runs on the leader.
func postJSON[Req any, Resp any](s *Server, ep endpoint, call func(context.Context, Req) (Resp, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, fmt.Sprintf("%s needs POST, not %s", ep.route, r.Method), "")
			return
		}
		var bound binding
		var who caller
		var ok bool
		if ep.admin {
			who, ok = s.authorizeAdmin(w, r, ep.route)
		} else {
			bound, ok = s.authorizeEdge(w, r, bearer(r))
		}
		if !ok {
			return
		}
		if len(r.URL.RawQuery) > 0 {
			writeError(w, http.StatusBadRequest, api.CodeBadRequest, ep.route+" takes no query parameters", "")
			return
		}
		body, aerr := readBody(r, w, s.maxBody)
		if aerr != nil {
			writeError(w, aerr.status, aerr.code, aerr.msg, "")
			return
		}
		var req Req
		if aerr := decodeStrict(body, &req, ep.emptyOK); aerr != nil {
			writeError(w, aerr.status, aerr.code, aerr.msg, "")
			return
		}
		if ep.admin {
			stamp(&req, who)
		}
		if v, ok := any(&req).(validator); ok {
			if err := v.Validate(); err != nil {
				writeError(w, http.StatusBadRequest, api.CodeBadRequest, err.Error(), "")
				return
			}
		}
		if err := bound.permits(&req); err != nil {
			writeError(w, http.StatusForbidden, api.CodeWrongEdge, err.Error(), "")
			return
		}
		if !s.svc.IsLeader() {
			s.toLeader(w, r, ep.route, body)
			return
		}
		resp, err := call(r.Context(), req)
		if err != nil {
			s.fail(w, r, ep.route, body, err)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

// fail answers a service error; a leader that lost leadership mid-request hands it to the new one.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, route string, body []byte, err error) {
	status, code := s.classify(err)
	if code == api.CodeNotLeader {
		s.toLeader(w, r, route, body)
		return
	}
	if r.Context().Err() != nil && code == api.CodeInternal {
		// The caller went away (or its long poll was cut); nobody reads this answer.
		status, code = http.StatusServiceUnavailable, api.CodeUnavailable
	}
	if status >= 500 {
		s.log.Warn("api request failed", "route", route, "error", err)
	}
	writeError(w, status, code, err.Error(), "")
}

func (s *Server) register() http.Handler {
	return postJSON(s, endpoint{route: api.PathRegister}, s.svc.Register)
}

func (s *Server) acquire() http.Handler {
	return postJSON(s, endpoint{route: api.PathAcquire}, s.svc.Acquire)
}

func (s *Server) renew() http.Handler {
	return postJSON(s, endpoint{route: api.PathRenew}, s.svc.Renew)
}

func (s *Server) report() http.Handler {
	return postJSON(s, endpoint{route: api.PathReport}, s.svc.Report)
}

func (s *Server) heartbeat() http.Handler {
	return postJSON(s, endpoint{route: api.PathHeartbeat}, s.svc.Heartbeat)
}

func (s *Server) pause() http.Handler {
	return postJSON(s, endpoint{route: api.PathPause, admin: true, emptyOK: true}, s.svc.Pause)
}

// empty is the body of admin calls that take no arguments.
type empty struct{}

func (s *Server) resume() http.Handler {
	return postJSON(s, endpoint{route: api.PathResume, admin: true, emptyOK: true}, func(ctx context.Context, _ empty) (api.PauseResponse, error) {
		return s.svc.Resume(ctx)
	})
}

func (s *Server) join() http.Handler {
	return postJSON(s, endpoint{route: api.PathJoin, admin: true}, func(ctx context.Context, req api.JoinRequest) (api.JoinResponse, error) {
		return s.svc.Join(ctx, req)
	})
}

func (s *Server) remove() http.Handler {
	return postJSON(s, endpoint{route: api.PathRemove, admin: true}, func(ctx context.Context, req api.RemoveRequest) (empty, error) {
		return empty{}, s.svc.Remove(ctx, req)
	})
}

// operate is an admin write, as retry is.
func (s *Server) operate() http.Handler {
	return postJSON(s, endpoint{route: api.PathOperator, admin: true}, s.svc.Operate)
}

// retry is an admin write: an admin of role operate, never an edge credential or a reader.
func (s *Server) retry() http.Handler {
	return postJSON(s, endpoint{route: api.PathRetry, admin: true}, s.svc.Retry)
}

func (s *Server) snapshot() http.Handler {
	return postJSON(s, endpoint{route: api.PathSnapshot, admin: true, emptyOK: true}, func(ctx context.Context, _ empty) (api.SnapshotResponse, error) {
		return s.svc.Snapshot(ctx)
	})
}
