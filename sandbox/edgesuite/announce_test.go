// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"testing"
	"time"

	"github.com/choria-io/go-choria/lifecycle"
	"github.com/nats-io/nats.go"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// TestEdge_AnnouncesItsStartup: like choria-provisioner, the edge publishes a startup lifecycle
// event of component "provisioner" under its own identity when it starts.
func TestEdge_AnnouncesItsStartup(t *testing.T) {
	t.Parallel()
	l := startLab(t, lab.Options{Emulated: 1})
	fw, err := l.Region(region).Framework("edge-eu-2.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := fw.NewConnector(t.Context(), fw.MiddlewareServers, "announce-listener", fw.Logger("test"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	events := make(chan *nats.Msg, 16)
	sub, err := conn.Nats().ChanSubscribe("choria.lifecycle.event.startup.provisioner", events)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := conn.Nats().Flush(); err != nil {
		t.Fatal(err)
	}

	startEdge(t, l, nil, nil)
	select {
	case m := <-events:
		e, err := lifecycle.NewFromJSON(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if e.Type() != lifecycle.Startup || e.Component() != "provisioner" || e.Identity() != lab.ClientIdentity(region, 1) {
			t.Fatalf("event %s from %s component %s", e.TypeString(), e.Identity(), e.Component())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no startup event from the edge")
	}
}
