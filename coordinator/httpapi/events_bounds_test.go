// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// gauge reads an unlabelled gauge or counter of reg.
func gauge(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name || len(f.GetMetric()) == 0 {
			continue
		}
		m := f.GetMetric()[0]
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// openStream starts a following event stream on url and returns once its answer's head is in;
// the stream is read by nobody and closed with ctx.
func openStream(ctx context.Context, t *testing.T, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+api.PathEvents, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// TestEvents_TheCapRefusesOneReaderMoreNamingIt: a member serving its limit of event streams
// refuses the next with 503, naming the limit and its setting, and counts it; a place freed is
// taken again.
func TestEvents_TheCapRefusesOneReaderMoreNamingIt(t *testing.T) {
	ms := clusterWith(t, 1, func(cfg *httpapi.Config) { cfg.MaxEventReaders = 2 })
	m := ms[0]
	ctx := ctxT(t)
	first, stopFirst := context.WithCancel(ctx)
	for _, c := range []context.Context{first, ctx} {
		if resp := openStream(c, t, m.url); resp.StatusCode != http.StatusOK {
			t.Fatalf("a reader under the cap: %d", resp.StatusCode)
		}
	}
	if got := gauge(t, m.reg, "muster_coordinator_event_readers"); got != 2 {
		t.Fatalf("muster_coordinator_event_readers = %v with two streams", got)
	}
	status, body, _ := do(t, http.MethodGet, m.url+api.PathEvents, adminToken, "")
	if status != http.StatusServiceUnavailable || !strings.Contains(body.Error, "2 event streams") || !strings.Contains(body.Error, "http.max_event_readers") {
		t.Fatalf("the third reader over a cap of 2: %d %+v", status, body)
	}
	if got := gauge(t, m.reg, "muster_coordinator_event_readers_refused_total"); got != 1 {
		t.Fatalf("refused readers counted %v, want 1", got)
	}
	stopFirst()
	testkit.WaitFor(t, 30*time.Second, "the first reader's place to be freed", func() bool {
		return gauge(t, m.reg, "muster_coordinator_event_readers") == 1
	})
	if resp := openStream(ctx, t, m.url); resp.StatusCode != http.StatusOK {
		t.Fatalf("a reader in the freed place: %d", resp.StatusCode)
	}
}

// smallBuffers makes every accepted connection's send buffer small, so a reader that does not
// read blocks the writer after a few kilobytes instead of megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestEvents_AStalledReaderIsCutAndItsPlaceFreed: a reader that asks for the stream and never
// reads is cut once a write waits longer than the write timeout; its place is freed for the
// next reader and the cut is counted.
func TestEvents_AStalledReaderIsCutAndItsPlaceFreed(t *testing.T) {
	ms := cluster(t, 1)
	ctx := ctxT(t)
	// Enough events to fill any socket buffers between the two ends many times over.
	for i := range 20 {
		req := api.RegisterRequest{Region: "ams", Edge: "e1"}
		for j := range 100 {
			req.Nodes = append(req.Nodes, api.RegisterNode{Identity: fmt.Sprintf("stall-%02d-%03d", i, j)})
		}
		if _, err := ms[0].svc.Register(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	h, err := httpapi.New(ms[0].svc, httpapi.Config{AdminTokens: []string{adminToken}, EdgeTokens: []string{edgeToken},
		Errors: coordinator.HTTPErrors(), Registry: reg, MaxEventReaders: 1, EventWriteTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)

	// The stalled reader: a request, then nothing read but the answer's first line.
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: muster\r\nAuthorization: Bearer %s\r\n\r\n", api.PathEvents, adminToken)
	line, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("the stalled reader's answer: %q %v", line, err)
	}

	testkit.WaitFor(t, 30*time.Second, "the stalled reader to be cut", func() bool {
		return gauge(t, reg, "muster_coordinator_event_readers") == 0
	})
	if got := gauge(t, reg, "muster_coordinator_event_readers_cut_total"); got != 1 {
		t.Fatalf("cut readers counted %v, want 1", got)
	}
	resp := openStream(ctx, t, srv.URL)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the next reader after the stalled one was cut (cap 1): %d", resp.StatusCode)
	}
}
