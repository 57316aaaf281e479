// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/choria-io/go-choria/lifecycle"
	"github.com/nats-io/nats.go"

	"github.com/seed96588659/muster/pkg/testkit"
)

// events collects lifecycle events as go-choria decodes them.
type events struct {
	mu  sync.Mutex
	got []lifecycle.Event
}

func (e *events) has(typ lifecycle.Type, identity string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.ContainsFunc(e.got, func(ev lifecycle.Event) bool {
		return ev.Type() == typ && ev.Identity() == identity && ev.Component() == "provision_mode_server"
	})
}

func (l *testLab) watchEvents(t *testing.T) *events {
	t.Helper()
	ev := &events{}
	nc := l.natsConn(t, "watcher.mcollective")
	_, err := nc.Subscribe("choria.lifecycle.event.>", func(m *nats.Msg) {
		e, err := lifecycle.NewFromJSON(m.Data)
		if err != nil {
			t.Errorf("lifecycle event does not decode with go-choria: %v: %s", err, m.Data)
			return
		}
		ev.mu.Lock()
		ev.got = append(ev.got, e)
		ev.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestLifecycle_ProvisionedRestartAndReprovisionAreAnnounced(t *testing.T) {
	l := startLab(t, 3, nil, nil)
	ev := l.watchEvents(t)
	const id = "emu-eu-00001"
	if err := l.fleet.Reprovision(id); err != nil {
		t.Fatal(err)
	}
	if ev.has(lifecycle.Startup, id) {
		t.Fatal("Reprovision of a node already in provisioning mode announced a startup")
	}
	pc := l.provisionClient(t, l.framework(t, "edge-eu-1.mcollective"), id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if res, err := pc.Configure(`{"plugin.choria.server.provision":"0"}`).Token(l.broker.Token()).Do(ctx); err != nil || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("configure: %v", err)
	}
	if res, err := pc.Restart(l.broker.Token()).Splay(1).Do(ctx); err != nil || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("restart: %v", err)
	}
	// the shutdown event comes when the restart is accepted, before the splay ends it
	testkit.WaitFor(t, 30*time.Second, "provisioned and shutdown events and the restart", func() bool {
		st, _ := l.fleet.State(id)
		return ev.has(lifecycle.Provisioned, id) && ev.has(lifecycle.Shutdown, id) && st.Mode == "provisioned"
	})
	st, _ := l.fleet.State(id)
	if st.Mode != "provisioned" || st.Config["plugin.choria.server.provision"] != "0" {
		t.Fatalf("after restart: %+v", st)
	}
	if s := l.fleet.Stats(); s.Configured != 1 || s.Provisioned != 1 {
		t.Fatalf("stats after one configure and restart: %+v", s)
	}

	if err := l.fleet.Reprovision(id); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "the startup event of the reprovisioned node", func() bool {
		return ev.has(lifecycle.Startup, id)
	})
	if got := l.rawInventory(t, l.framework(t, "edge-eu-1.mcollective"), id, 1, 30*time.Second); len(got) != 1 {
		t.Fatalf("reprovisioned node answered %d times", len(got))
	}
	if err := l.fleet.Reprovision("no-such-node"); err == nil {
		t.Fatal("Reprovision of an unknown identity succeeded")
	}
}
