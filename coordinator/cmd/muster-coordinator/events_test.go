// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// TestEventsCommand_SaysPlainlyThatEventsWereMissed: a reset in the stream (the reader fell out
// of the member's event log) is printed as its JSON line like every event, and also told to the
// person at the terminal on stderr, with what to do: read the nodes again.
func TestEventsCommand_SaysPlainlyThatEventsWereMissed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != api.PathEvents {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 900.0\nevent: reset\ndata: {\"index\":900,\"pos\":0,\"kind\":\"reset\",\"identity\":\"\",\"region\":\"\",\"to\":\"\",\"at\":\"0001-01-01T00:00:00Z\"}\n\n")
		fmt.Fprint(w, "id: 900.0\nevent: transition\ndata: {\"index\":900,\"pos\":0,\"kind\":\"transition\",\"identity\":\"n1\",\"region\":\"eu\",\"to\":\"waiting\",\"at\":\"2030-01-01T00:00:00Z\"}\n\n")
	}))
	defer srv.Close()
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", "t")
	code, out, errOut := runCLI(t, "events", "--after", "12.3", "--addr", srv.URL)
	if code != 0 {
		t.Fatalf("events exited %d: %s", code, errOut)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.Contains(lines[0], `"kind":"reset"`) {
		t.Fatalf("stdout is not the two events as JSON lines:\n%s", out)
	}
	if !strings.Contains(errOut, "missed events") || !strings.Contains(errOut, "900.0") || !strings.Contains(errOut, "nodes") {
		t.Fatalf("stderr does not say events were missed, from where, and what to do:\n%s", errOut)
	}
}

// TestEventsCommand_FollowEndsQuietlyOnAnInterrupt: Ctrl-C is how `events --follow` ends, so
// it exits 0 with nothing on stderr, not "context canceled" and 1.
func TestEventsCommand_FollowEndsQuietlyOnAnInterrupt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 7.0\nevent: transition\ndata: {\"index\":7,\"pos\":0,\"kind\":\"transition\",\"identity\":\"n1\",\"region\":\"eu\",\"to\":\"waiting\",\"at\":\"2030-01-01T00:00:00Z\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a follow waits for more until the reader goes
	}))
	defer srv.Close()
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", "t")
	type result struct {
		code     int
		out, err string
	}
	// The interrupt comes once the event is printed: the server's flush says nothing of when the
	// command read it.
	out := &signalWriter{want: `"identity":"n1"`, seen: make(chan struct{})}
	done := make(chan result, 1)
	go func() {
		var errb bytes.Buffer
		code := run([]string{"events", "--follow", "--addr", srv.URL}, out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	select {
	case <-out.seen:
	case r := <-done:
		t.Fatalf("events --follow ended before the interrupt: exit %d\n%s%s", r.code, r.out, r.err)
	case <-time.After(30 * time.Second):
		t.Fatal("events --follow never printed the event")
	}
	// The command listens for SIGINT from its start (run's signal.NotifyContext), before it
	// connects: the signal reaches it, not the test binary's default handler.
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 0 || r.err != "" || !strings.Contains(r.out, `"identity":"n1"`) {
			t.Fatalf("events --follow after Ctrl-C: exit %d, stderr %q, stdout %q; want 0, nothing on stderr and the event", r.code, r.err, r.out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("events --follow did not end on SIGINT")
	}
}

// signalWriter keeps what is written and closes seen once it holds want.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
