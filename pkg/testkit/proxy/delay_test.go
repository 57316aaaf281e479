// SPDX-License-Identifier: Apache-2.0

package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/testkit"
)

// A link with a one-way latency holds each direction for it: a round trip through the proxy
// takes at least twice the latency, and with jitter the bytes still arrive in the order sent.
func TestProxy_LatencyDelaysBothDirectionsAndKeepsOrder(t *testing.T) {
	const oneWay = 40 * time.Millisecond
	_, c := dialed(t, Options{
		Latency: func(string) Latency { return Latency{Base: oneWay, Jitter: 10 * time.Millisecond} },
		Jitter:  UniformJitter,
	})

	start := time.Now()
	if got, err := roundTrip(c, "ping"); err != nil || got != "ping\n" {
		t.Fatalf("round trip: %q %v", got, err)
	}
	if took := time.Since(start); took < 2*oneWay {
		t.Fatalf("a round trip took %v through a link of %v each way", took, oneWay)
	}

	// Many small writes, each a chunk of its own with its own jitter, come back in order.
	const lines = 200
	go func() {
		for i := range lines {
			_, _ = fmt.Fprintf(c, "%d\n", i)
		}
	}()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	for i := range lines {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if line != fmt.Sprintf("%d\n", i) {
			t.Fatalf("line %d came back as %q: reordered", i, line)
		}
	}
}

// A connection whose origin has no latency is forwarded at once, beside delayed ones.
func TestProxy_LatencyIsPerOrigin(t *testing.T) {
	_, c := dialed(t, Options{
		Origin: func(*net.TCPAddr) string { return "near" },
		Latency: func(origin string) Latency {
			if origin == "near" {
				return Latency{}
			}
			return Latency{Base: time.Hour}
		},
	})
	if got, err := roundTrip(c, "near"); err != nil || got != "near\n" {
		t.Fatalf("round trip from a near origin: %q %v", got, err)
	}
}

// A partition drops what a slow link still holds: closing the proxy does not wait out the delay.
func TestProxy_APartitionDropsWhatTheLinkHolds(t *testing.T) {
	p, c := dialed(t, Options{Latency: func(string) Latency { return Latency{Base: time.Hour} }})
	if _, err := fmt.Fprintln(c, "held"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close waited for bytes a link of an hour still held")
	}
}

// dialed is a connection through a proxy with o in front of an echo server.
func dialed(t *testing.T, o Options) (*Proxy, net.Conn) {
	t.Helper()
	o.Name, o.Target = "wan", testkit.Echo(t)
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, c
}

// A dialer holds the link to each address for the latency it names for that address: the near
// one answers, the far one (an hour away) holds the bytes.
func TestDialer_LatencyIsPerAddress(t *testing.T) {
	far, near := testkit.Echo(t), testkit.Echo(t)
	d := &Dialer{Name: "edge", Latency: func(addr string) Latency {
		if addr == far {
			return Latency{Base: time.Hour}
		}
		return Latency{}
	}}
	t.Cleanup(func() { d.Close() })
	dial := func(addr string, wait time.Duration) (string, error) {
		c, err := d.DialContext(t.Context(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(wait))
		return roundTrip(c, "ping")
	}
	if got, err := dial(near, 30*time.Second); err != nil || got != "ping\n" {
		t.Fatalf("round trip to the near address: %q %v", got, err)
	}
	if got, err := dial(far, 200*time.Millisecond); err == nil {
		t.Fatalf("the far address answered %q through a link of an hour", got)
	}
}

// messages is a reader that returns n messages of size bytes, one per Read, as a connection
// carrying small requests does.
type messages struct{ n, size int }

func (m *messages) Read(p []byte) (int, error) {
	if m.n == 0 {
		return 0, io.EOF
	}
	m.n--
	return min(len(p), m.size), nil
}

// BenchmarkDelayedCopy_SmallMessages is what a delayed link costs per 300-byte message (an
// API call or a Raft heartbeat): the benchmarks' proxies run on the fleet's CPUs, so what they
// allocate is the fleet's garbage.
func BenchmarkDelayedCopy_SmallMessages(b *testing.B) {
	b.ReportAllocs()
	src := &messages{n: b.N, size: 300}
	delayedCopy(io.Discard, src, Latency{Base: time.Microsecond}, nil, make(chan struct{}))
}
