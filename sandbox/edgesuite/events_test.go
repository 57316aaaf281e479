// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/choria-io/go-choria/lifecycle"

	"github.com/seed96588659/muster/edge/discovery"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// startupEvent is a startup event of component for identity as a go-choria server publishes it.
func startupEvent(t *testing.T, component, identity, version string) (subject string, body []byte) {
	t.Helper()
	e, err := lifecycle.New(lifecycle.Startup, lifecycle.Identity(identity), lifecycle.Component(component), lifecycle.Version(version))
	if err != nil {
		t.Fatal(err)
	}
	e.SetFormat(lifecycle.CloudEventV1Format)
	body, err = lifecycle.ToCloudEventV1(e).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	subject, err = e.Target()
	if err != nil {
		t.Fatal(err)
	}
	return subject, body
}

// TestListen_StartupFloodIsBoundedAndCounted: while the edge takes no more startup events (a
// register backlog), a flood of them on the real broker is held within the listener's bounds
// and the rest dropped and counted; an event larger than the size bound is dropped unread.
func TestListen_StartupFloodIsBoundedAndCounted(t *testing.T) {
	t.Parallel()
	const component, flood = "muster_flood", 6000
	limits := discovery.EventLimits{PendingMsgs: 64, PendingBytes: 256 << 10, MaxSize: 4 << 10}
	l := startLab(t, lab.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	fw, err := l.Region(region).Framework(lab.ClientIdentity(region, 2))
	if err != nil {
		t.Fatal(err)
	}
	o := discovery.DefaultOptions()
	o.Events = limits
	d, err := discovery.New(ctx, fw, o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	var (
		mu      sync.Mutex
		found   = map[string]int{}
		dropped = map[string]int{}
	)
	busy, release := make(chan struct{}), make(chan struct{})
	err = d.Listen(ctx, component, func(id string) {
		mu.Lock()
		found[id]++
		mu.Unlock()
		if id == "first" {
			close(busy)
			select { // the edge's register backlog: it takes nothing more until released
			case <-release:
			case <-ctx.Done():
			}
		}
	}, func(err error) {
		var de *discovery.DroppedError
		if !errors.As(err, &de) {
			t.Errorf("bad event: %v", err)
			return
		}
		mu.Lock()
		dropped[de.Reason] += de.Count
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}

	pfw, err := l.Region(region).Framework(lab.ClientIdentity(region, 1))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := pfw.NewConnector(ctx, pfw.MiddlewareServers, "flood", pfw.Logger("flood"))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	publish := func(identity, version string) {
		subject, body := startupEvent(t, component, identity, version)
		if err := pub.Nats().Publish(subject, body); err != nil {
			t.Fatal(err)
		}
	}
	publish("big-node", strings.Repeat("9", 2*limits.MaxSize)) // a valid event, only too large
	publish("first", "1.0")
	select {
	case <-busy:
	case <-ctx.Done():
		t.Fatal("the first event never arrived")
	}
	for i := range flood {
		publish(fmt.Sprintf("flood-%05d", i), "1.0")
	}
	if err := pub.Nats().Flush(); err != nil {
		t.Fatal(err)
	}

	// Every flood event reaches the listener's connection: held there, or dropped at its bounds.
	testkit.WaitFor(t, time.Minute, "every flood event held or dropped", func() (bool, string) {
		st := d.Events()
		return st.Pending+st.Dropped >= flood || st.Pending > limits.PendingMsgs, fmt.Sprintf("%+v", st)
	})
	if st := d.Events(); st.Pending > limits.PendingMsgs || st.PendingBytes > limits.PendingBytes {
		t.Fatalf("%d events (%d bytes) held behind a busy edge, want at most %d (%d bytes): %+v", st.Pending, st.PendingBytes, limits.PendingMsgs, limits.PendingBytes, st)
	}
	close(release)
	testkit.WaitFor(t, time.Minute, "the held events handled and the drops counted", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		handled := len(found) - found["first"] - found["big-node"]
		return handled+dropped[discovery.DropOverflow] == flood, fmt.Sprintf("%d handled, dropped %v", handled, dropped)
	})
	mu.Lock()
	defer mu.Unlock()
	if n := len(found) - 1; n > limits.PendingMsgs+1 {
		t.Errorf("%d flood events handled after the backlog, want at most the %d held", n, limits.PendingMsgs)
	}
	if found["big-node"] > 0 || dropped[discovery.DropOversized] != 1 {
		t.Errorf("oversized event: found %d times, %d counted as oversized; want it dropped unread and counted once", found["big-node"], dropped[discovery.DropOversized])
	}
}
