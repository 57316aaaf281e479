// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/emulated"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// leaseUntil is a host's pause source whose lease ends at a fixed instant of the edge's clock.
type leaseUntil struct{ at time.Time }

func (l leaseUntil) Paused() bool                { return false }
func (l leaseUntil) Deadline() (time.Time, bool) { return l.at, true }

// startFenceFleet starts one emulated node of its own on the suite's broker, so its counters
// show what reached it and what it refused.
func startFenceFleet(t *testing.T, prefix string) (*emulated.Fleet, string) {
	t.Helper()
	r := shared.Region(region)
	f, err := emulated.Start(context.Background(), emulated.Config{
		BrokerURL: r.Broker().URL(), Region: region, Prefix: prefix, Count: 1,
		Token: token(), JWT: r.ProvisioningJWT(), Version: "0.29.4",
	})
	if err != nil {
		t.Fatalf("fleet %s: %v", prefix, err)
	}
	t.Cleanup(func() { f.Stop() })
	return f, f.Identities()[0]
}

// TestConn_TTLIsTheLeaseRemainingValidity: a request is valid on a node (its creation time
// plus its Choria TTL) no longer than its lease has left, so a node refuses it once it arrives
// after the lease's end, as a SIGSTOPped edge's request or one held in a buffer would. Protocol
// v1 TTLs are at least 30 s (go-choria's schema), so a shorter lease dates the request back.
// The edge's clock runs 3 s behind the nodes' here: every request is 3 s old when it arrives.
// With 10.5 s of lease left it is answered; with 2.5 s the node drops it unanswered; with under
// a second left it is not sent at all.
func TestConn_TTLIsTheLeaseRemainingValidity(t *testing.T) {
	fleet, emulatedNode := startFenceFleet(t, "fence-ttl-")
	behind := func() time.Time { return time.Now().Add(-3 * time.Second) }
	c := newCaller(t, "edge-eu-fence.mcollective", time.Second)
	conn := c.dial(t, rpc.ConnOptions{Timeout: 2 * time.Second, Now: behind})
	inventory := func(identity string, left time.Duration) ([]rpc.Reply, error) {
		return conn.Request(context.Background(), rpc.Request{Agent: "rpcutil", Action: "inventory", Identity: identity,
			Data: json.RawMessage(`{}`), Pause: leaseUntil{behind().Add(left)}})
	}

	for _, identity := range []string{emulatedNode, realBench} {
		t.Run(identity, func(t *testing.T) {
			if replies, err := inventory(identity, 10500*time.Millisecond); err != nil || len(replies) != 1 {
				t.Fatalf("10.5 s of lease left, 3 s old on arrival: %d replies, %v", len(replies), err)
			}

			before := fleet.Stats()
			if replies, err := inventory(identity, 2500*time.Millisecond); err != nil || len(replies) != 0 {
				t.Fatalf("2.5 s of lease left, 3 s old on arrival: want it refused unanswered, got %d replies, %v", len(replies), err)
			}
			if identity == emulatedNode {
				if fleet.Stats().Invalid == before.Invalid {
					t.Fatalf("the node refused nothing as past its TTL: %+v -> %+v", before, fleet.Stats())
				}
			}

			before = fleet.Stats()
			_, err := inventory(identity, 900*time.Millisecond)
			if !errors.Is(err, rpc.ErrFenced) || !errors.Is(err, rpc.ErrPaused) {
				t.Fatalf("0.9 s of lease left: want the request fenced (not sent), got %v", err)
			}
			if identity == emulatedNode && fleet.Stats().Requests != before.Requests {
				t.Fatalf("a request under 1 s of lease reached the node: %+v -> %+v", before, fleet.Stats())
			}
		})
	}
}

// TestConn_StallBetweenCheckAndPublishVoidsTheAttempt: a monotonic jump between the last check
// and the publish is a process that was stopped there (SIGSTOP, a suspended VM); what it
// checked no longer holds, so the attempt is not sent and the call ends as paused.
func TestConn_StallBetweenCheckAndPublishVoidsTheAttempt(t *testing.T) {
	fleet, node := startFenceFleet(t, "fence-stall-")
	// Every reading is 600 ms after the previous one: whatever is read between the check and the
	// publish, the two are further apart than rpc.MaxStall.
	start := time.Now()
	var readings atomic.Int64
	jumpy := func() time.Time { return start.Add(time.Duration(readings.Add(1)) * 600 * time.Millisecond) }
	c := newCaller(t, "edge-eu-stall.mcollective", time.Second)
	conn := c.dial(t, rpc.ConnOptions{Timeout: time.Second, Now: jumpy})

	before := fleet.Stats()
	_, err := c.node(conn, node, leaseUntil{start.Add(time.Hour)}).Inventory(context.Background())
	if !errors.Is(err, rpc.ErrFenced) || !errors.Is(err, rpc.ErrPaused) {
		t.Fatalf("want the attempt voided as paused, got %v", err)
	}
	if got := c.metrics.RPCAttempts("eu", "rpcutil#inventory"); got != 1 {
		t.Fatalf("timed %d attempts, want 1: a voided attempt ends the call", got)
	}
	if fleet.Stats().Requests != before.Requests {
		t.Fatalf("the voided request reached the node: %+v -> %+v", before, fleet.Stats())
	}
}

// A stall between the check and the publish that leaves the lease valid (a loaded machine's
// scheduler, a GC pause) voids only the request built before it: the request is checked, dated
// and built again and sent once, within the same attempt. Ending the call as a pause instead
// gave the node back mid-flow whenever -race on two busy cores took 374 ms over a signature.
func TestConn_AStallThatLeavesTheLeaseValidRebuildsTheRequest(t *testing.T) {
	fleet, node := startFenceFleet(t, "fence-rebuild-")
	// The second reading, the first request's recheck, is 600 ms after the first; every later
	// reading follows the real clock from there.
	start := time.Now()
	var readings atomic.Int64
	jumpOnce := func() time.Time {
		if readings.Add(1) == 1 {
			return start
		}
		return start.Add(600*time.Millisecond + time.Since(start))
	}
	c := newCaller(t, "edge-eu-rebuild.mcollective", time.Second)
	conn := c.dial(t, rpc.ConnOptions{Timeout: 5 * time.Second, Now: jumpOnce})

	before := fleet.Stats()
	if _, err := c.node(conn, node, leaseUntil{start.Add(time.Hour)}).Inventory(context.Background()); err != nil {
		t.Fatalf("inventory after a stall the lease outlived: %v", err)
	}
	if got := c.metrics.RPCAttempts("eu", "rpcutil#inventory"); got != 1 {
		t.Fatalf("timed %d attempts, want 1", got)
	}
	if got := fleet.Stats().Requests - before.Requests; got != 1 {
		t.Fatalf("%d requests reached the node, want the rebuilt one only", got)
	}
}

// TestConn_PublishWhileDisconnectedIsNeverSent: while the broker is down a request is not
// buffered to be sent at the reconnect, when the lease it was checked under may have ended.
// The node that would receive it connects only once the broker is back, so it sees whatever
// the edge's connection flushes when it reconnects.
func TestConn_PublishWhileDisconnectedIsNeverSent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const rg = "fz"
	l, err := lab.Start(ctx, lab.Options{Dir: filepath.Join(t.TempDir(), "lab"), Regions: []string{rg}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Stop()
	r := l.Region(rg)
	fw, err := r.Framework("edge-fz-1.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.Dial(ctx, fw, rpc.ConnOptions{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const node = "late-fz-00000"
	inventory := func(identity string) error {
		replies, err := conn.Request(ctx, rpc.Request{Agent: "rpcutil", Action: "inventory", Identity: identity, Data: json.RawMessage(`{}`)})
		if err == nil && len(replies) != 1 {
			err = fmt.Errorf("%d replies", len(replies))
		}
		return err
	}

	outage, restore := context.WithCancel(ctx)
	restarted := make(chan error, 1)
	go func() { restarted <- r.RestartBroker(outage, time.Hour) }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Broker().Port()))
	testkit.WaitFor(t, 30*time.Second, "the broker's port to close", func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	// The first may still leave before the connection noticed the broker is gone (and is lost
	// with the dead socket); the later ones are published while it knows.
	refused := 0
	for range 8 {
		if err := inventory(node); err != nil && !strings.Contains(err.Error(), "0 replies") {
			refused++
			t.Logf("refused while disconnected: %v", err)
		}
	}
	restore()
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	// Two nodes: the first is the one addressed while disconnected, the second shows when the
	// edge's connection is back (and has flushed whatever it held).
	rec, err := recorder.Open(filepath.Join(t.TempDir(), "actions.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	late, err := emulated.Start(ctx, emulated.Config{BrokerURL: r.Broker().URL(), Region: rg, Prefix: "late-fz-", Count: 2,
		Token: r.Broker().Token(), JWT: r.ProvisioningJWT(), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer late.Stop()
	testkit.WaitFor(t, time.Minute, "the late fleet to answer", func() bool { return inventory(late.Identities()[1]) == nil })
	actions, err := recorder.ReadFile(rec.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actions {
		if a.Node == node {
			t.Errorf("%s received %s at %s, published while the broker was down", a.Node, a.Action, a.Time.Format(recorder.TimeFormat))
		}
	}
	if refused == 0 {
		t.Fatal("no request published while disconnected failed")
	}
}
