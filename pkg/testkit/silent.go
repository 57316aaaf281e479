// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Silent is a coordinator member that answers until it is cut, then holds every request without
// answering or closing the connection: a leader lost to a partition or a power loss.
type Silent struct {
	*httptest.Server
	cut   atomic.Bool
	calls atomic.Int64
}

// NewSilent serves answer until Cut; t's cleanup releases the held requests and closes it.
func NewSilent(t testing.TB, answer http.HandlerFunc) *Silent {
	t.Helper()
	s := &Silent{}
	release := make(chan struct{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cut.Load() {
			s.calls.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		answer(w, r)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(release) }) // runs first: Close waits for the held handlers
	return s
}

// Cut makes the member hold every request from now on.
func (s *Silent) Cut() { s.cut.Store(true) }

// Calls is how many requests reached the member since it was cut.
func (s *Silent) Calls() int64 { return s.calls.Load() }
