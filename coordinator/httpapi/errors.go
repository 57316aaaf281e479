// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/seed96588659/muster/pkg/api"
)

// apiError is a failure the handler answers with its own status and code.
type apiError struct {
	status int
	code   api.Code
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(code api.Code, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: code, msg: msg}
}

// classify finds the status and code of a service error; unknown errors are internal.
func (s *Server) classify(err error) (int, api.Code) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status, ae.code
	}
	return api.Classify(s.errors, err)
}

// writeError answers with an api.ErrorBody; leader, when known, tells the client where to go.
func writeError(w http.ResponseWriter, status int, code api.Code, msg, leader string) {
	if leader != "" {
		w.Header().Set(api.HeaderLeader, leader)
	}
	writeJSON(w, status, api.ErrorBody{Error: msg, Code: code, Leader: leader})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"encode answer failed","code":"internal"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
