// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/choria-io/go-choria/lifecycle"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
)

// provisionLife runs one provisioning of id by caller as an edge would (gencsr, configure,
// restart) and returns the CSR's public key.
func (l *testLab) provisionLife(t *testing.T, caller, id string) string {
	t.Helper()
	pc := l.provisionClient(t, l.framework(t, caller), id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := l.broker.Token()
	csr, err := pc.Gencsr(token).Do(ctx)
	if err != nil || len(csr.AllOutputs()) != 1 || !csr.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("gencsr of %s by %s: %v", id, caller, err)
	}
	conf, err := pc.Configure(`{"plugin.choria.server.provision":"false"}`).Token(token).Do(ctx)
	if err != nil || !conf.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("configure of %s by %s: %v %+v", id, caller, err, conf.AllOutputs()[0].ResultDetails())
	}
	restart, err := pc.Restart(token).Splay(1).Do(ctx)
	if err != nil || !restart.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("restart of %s by %s: %v", id, caller, err)
	}
	return csr.AllOutputs()[0].PublicKey()
}

// waitBack waits until id came back in provisioning mode for the k-th time.
func (l *testLab) waitBack(t *testing.T, id string, k int) NodeState {
	t.Helper()
	var st NodeState
	testkit.WaitFor(t, 30*time.Second, id+" back in provisioning mode", func() bool {
		st, _ = l.fleet.State(id)
		return st.Reentries == k && st.Mode == "provisioning"
	})
	return st
}

// incarnationsOf are the incarnations id's accepted restarts were recorded in.
func (l *testLab) incarnationsOf(t *testing.T, id string) []int {
	t.Helper()
	var out []int
	for _, a := range l.readActions(t, id) {
		if a.Action == audit.Restart && a.OK {
			out = append(out, a.Incarnation)
		}
	}
	return out
}

func TestReentry_RebuiltNodeComesBackOnceAsANewMachine(t *testing.T) {
	l := startLab(t, 3, mustFlags(t, "index=1:rebuilt=200ms", "index=1:version=0.29.0"), nil)
	ev := l.watchEvents(t)
	const id = "emu-eu-00001"

	first := l.provisionLife(t, "edge-eu-1.mcollective", id)
	st := l.waitBack(t, id, 1)
	if st.Incarnation != 2 || st.Config["plugin.choria.server.provision"] != "true" || st.LockedBy != "" || st.Version != "0.29.0" {
		t.Fatalf("rebuilt node: %+v, want incarnation 2, its provisioned configuration and lock gone, the first version", st)
	}
	testkit.WaitFor(t, 10*time.Second, "the rebuilt node's startup event", func() bool { return ev.has(lifecycle.Startup, id) })

	// A new machine holds no lock of its former life: another caller provisions it at once.
	second := l.provisionLife(t, "edge-eu-2.mcollective", id)
	if second == first {
		t.Fatalf("the rebuilt node's CSR carries the public key of its former life")
	}
	testkit.WaitFor(t, 30*time.Second, "the second provisioning", func() bool {
		st, _ := l.fleet.State(id)
		return st.Mode == "provisioned"
	})
	// Rebuilt once: its decision not to come back was taken with the restart; a window ten
	// times its delay would show a second rebuild.
	time.Sleep(2 * time.Second)
	if st, _ := l.fleet.State(id); st.Mode != "provisioned" || st.Reentries != 1 {
		t.Fatalf("after its only rebuild: %+v", st)
	}
	if got := l.incarnationsOf(t, id); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("accepted restarts recorded in incarnations %v, want [1 2]", got)
	}
	if s := l.fleet.Stats(); s.Provisioned != 2 || s.Reentered != 1 {
		t.Fatalf("stats: %+v", s)
	}
	all := l.readActions(t, id)
	if rep := audit.Build(all); len(rep.DoubleProvisioned) != 0 || !rep.Nodes[id].Provisioned || rep.Nodes[id].Episodes != 2 {
		t.Fatalf("two callers on two lives read as %+v, episodes %d", rep.DoubleProvisioned, rep.Nodes[id].Episodes)
	}
}

func TestReentry_FlappingNodeComesBackAfterEveryRestartUntilItsCount(t *testing.T) {
	l := startLab(t, 2, mustFlags(t, "index=0:flapping=100ms/2"), nil)
	const id = "emu-eu-00000"
	var keys []string
	for k := 1; k <= 2; k++ {
		keys = append(keys, l.provisionLife(t, "edge-eu-1.mcollective", id))
		if st := l.waitBack(t, id, k); st.Incarnation != k+1 {
			t.Fatalf("flap %d: %+v", k, st)
		}
	}
	keys = append(keys, l.provisionLife(t, "edge-eu-1.mcollective", id))
	testkit.WaitFor(t, 30*time.Second, "the last provisioning to hold", func() bool {
		st, _ := l.fleet.State(id)
		return st.Mode == "provisioned"
	})
	time.Sleep(time.Second) // ten times its delay: a third flap would show
	if st, _ := l.fleet.State(id); st.Mode != "provisioned" || st.Reentries != 2 {
		t.Fatalf("after its last flap: %+v", st)
	}
	// The same machine each time: its key pair survives the flaps.
	if keys[0] != keys[1] || keys[1] != keys[2] {
		t.Fatalf("a flapping node changed its key pair")
	}
	if got := l.incarnationsOf(t, id); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("accepted restarts recorded in incarnations %v, want [1 2 3]", got)
	}
	if st, _ := l.fleet.State("emu-eu-00001"); st.Mode != "provisioning" || st.Reentries != 0 {
		t.Fatalf("the healthy node: %+v", st)
	}
}

func TestReentry_ReenterArmsARunningNode(t *testing.T) {
	l := startLab(t, 2, nil, nil)
	const id = "emu-eu-00001"
	if err := l.fleet.Reenter(id, faults.Fault{Rebuilt: &faults.Reentry{After: 100 * time.Millisecond, Times: 1}}); err != nil {
		t.Fatal(err)
	}
	first := l.provisionLife(t, "edge-eu-1.mcollective", id)
	l.waitBack(t, id, 1)
	if second := l.provisionLife(t, "edge-eu-1.mcollective", id); second == first {
		t.Fatal("the rebuilt node kept its key pair")
	}
	for _, c := range []struct {
		id    string
		fault faults.Fault
	}{
		{"no-such-node", faults.Fault{Flapping: &faults.Reentry{After: time.Second, Times: 1}}},
		{id, faults.Fault{Silent: true}},
		{id, faults.Fault{Flapping: &faults.Reentry{After: time.Second}}},
	} {
		if err := l.fleet.Reenter(c.id, c.fault); err == nil {
			t.Errorf("Reenter(%s, %+v) succeeded", c.id, c.fault)
		}
	}
}
