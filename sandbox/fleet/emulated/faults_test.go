// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/go-choria/protocol"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
)

func mustFlags(t *testing.T, flags ...string) *faults.Set {
	t.Helper()
	s, err := faults.ParseFlags(flags)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFaults_SilentNodeIsNeitherDiscoveredNorAnswers(t *testing.T) {
	l := startLab(t, 10, mustFlags(t, "index=3:silent"), nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	found := l.discover(t, fw, 9, 30*time.Second, nil)
	if len(found) != 9 || slices.Contains(found, "emu-eu-00003") {
		t.Fatalf("discovered %d nodes (silent one included: %v)", len(found), slices.Contains(found, "emu-eu-00003"))
	}
	if got := l.rawInventory(t, fw, "emu-eu-00003", 0, 3*time.Second); len(got) != 0 {
		t.Fatalf("silent node answered inventory %d times", len(got))
	}
	// The empty window above ends on its own clock, not on the node having seen the request.
	testkit.WaitFor(t, 30*time.Second, "the unanswered inventory to be recorded", func() bool {
		return len(l.readActions(t, "emu-eu-00003")) >= 1
	})
	acts := l.readActions(t, "emu-eu-00003")
	if len(acts) != 1 || acts[0].OK || !strings.Contains(acts[0].Error, "silent") {
		t.Fatalf("recorded %+v", acts)
	}
}

func TestFaults_DuplicateIdentityAnswersTwice(t *testing.T) {
	l := startLab(t, 4, mustFlags(t, "identity=emu-eu-00002:duplicate"), nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	found := l.discover(t, fw, 5, 30*time.Second, nil)
	if len(found) != 5 || found[2] != "emu-eu-00002" || found[3] != "emu-eu-00002" {
		t.Fatalf("discovered %v, want emu-eu-00002 twice among 5", found)
	}
	if got := l.rawInventory(t, fw, "emu-eu-00002", 2, 30*time.Second); len(got) != 2 {
		t.Fatalf("inventory to a duplicated identity got %d replies, want 2", len(got))
	}
	// go-choria's client stops reading once its one target answered; both servers still get it.
	inventory(t, l.rpcutil(t, fw, "emu-eu-00002"))
	testkit.WaitFor(t, 10*time.Second, "both twins to record both inventories", func() bool {
		return len(l.readActions(t, "emu-eu-00002")) == 4
	})
	if got := len(l.fleet.Identities()); got != 4 {
		t.Fatalf("Identities lists %d, want each identity once", got)
	}
}

func TestFaults_FailKTimesThenSucceed(t *testing.T) {
	l := startLab(t, 2, mustFlags(t, "index=0:fail=inventory/2"), nil)
	rc := l.rpcutil(t, l.framework(t, "edge-eu-1.mcollective"), "emu-eu-00000")
	var got []string
	for range 3 {
		outs := inventory(t, rc)
		if len(outs) != 1 {
			t.Fatalf("replies = %d", len(outs))
		}
		d := outs[0].ResultDetails()
		got = append(got, d.StatusMessage())
		if d.OK() != (len(got) == 3) {
			t.Fatalf("attempt %d ok=%v: %q", len(got), d.OK(), d.StatusMessage())
		}
	}
	want := []string{"emulated fault: rpcutil#inventory failed (1 of 2)", "emulated fault: rpcutil#inventory failed (2 of 2)", "OK"}
	if !slices.Equal(got, want) {
		t.Fatalf("status messages %q, want %q", got, want)
	}
}

func TestFaults_SlowDelaysOnlyItsActions(t *testing.T) {
	l := startLab(t, 1, mustFlags(t, "index=0:slow=1500ms@inventory"), nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	pc := l.provisionClient(t, fw, "emu-eu-00000")
	res, err := pc.Jwt(l.broker.Token()).Do(context.Background())
	if err != nil || len(res.AllOutputs()) != 1 {
		t.Fatalf("jwt on a node slow only for inventory: %v", err)
	}
	rc := l.rpcutil(t, fw, "emu-eu-00000")
	start := time.Now()
	res2, err := rc.Inventory().Do(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A lower bound only: the reply cannot come before the injected delay.
	took := time.Since(start)
	if len(res2.AllOutputs()) == 1 && took < 1500*time.Millisecond {
		t.Fatalf("slow inventory answered after %v", took)
	}
	if len(res2.AllOutputs()) == 0 {
		// rpcutil's DDL timeout is 2s; on a loaded machine the delayed reply may miss it, which
		// is the behaviour a slow node is for. The node must still have handled it.
		testkit.WaitFor(t, 10*time.Second, "the slow reply to be recorded", func() bool {
			return len(l.readActions(t, "emu-eu-00000")) == 2
		})
	}
}

func TestFaults_DropFirstKRequests(t *testing.T) {
	l := startLab(t, 1, mustFlags(t, "index=0:drop=2"), nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	var counts []int
	for range 3 {
		counts = append(counts, len(l.rawInventory(t, fw, "emu-eu-00000", 1, 8*time.Second)))
	}
	if !slices.Equal(counts, []int{0, 0, 1}) {
		t.Fatalf("replies per attempt %v, want [0 0 1]", counts)
	}
}

func TestFaults_DisconnectAfterAnActionAndComeBack(t *testing.T) {
	// Away for 10s: the discovery below, with its TLS connect and RSA signing, must reach the
	// fleet before the node is back even on a loaded machine.
	l := startLab(t, 2, mustFlags(t, "index=1:disconnect=jwt/10s"), nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	pc := l.provisionClient(t, fw, "emu-eu-00001")
	res, err := pc.Jwt(l.broker.Token()).Do(context.Background())
	if err != nil || len(res.AllOutputs()) != 1 || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("jwt before the disconnect: %v", err)
	}
	st, _ := l.fleet.State("emu-eu-00001")
	if st.Mode != "away" {
		t.Fatalf("after jwt the node is %s, want away", st.Mode)
	}
	if found := l.discover(t, fw, 0, 2*time.Second, func(f *protocol.Filter) { f.AddIdentityFilter("/emu-eu-00001/") }); len(found) != 0 {
		t.Fatalf("disconnected node discovered")
	}
	testkit.WaitFor(t, time.Minute, "the node to come back", func() bool {
		return len(l.rawInventory(t, fw, "emu-eu-00001", 1, time.Second)) == 1
	})
	st, _ = l.fleet.State("emu-eu-00001")
	if st.LockedBy == "" {
		t.Fatal("a reconnected node lost its provisioning lock; a dropped connection keeps process state")
	}
}

func TestFaults_VersionUpgradableAndFactsShowInInventoryAndFilters(t *testing.T) {
	set, err := faults.Parse([]byte(`
- index: 4
  version: 0.28.0
  upgradable: false
  facts: {rack: r7, os: {family: RedHat}}
`), "faults.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := startLab(t, 8, set, nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	outs := inventory(t, l.rpcutil(t, fw, "emu-eu-00004"))
	if len(outs) != 1 || outs[0].Version() != "0.28.0" || outs[0].Upgradable() || outs[0].Facts()["rack"] != "r7" {
		t.Fatalf("inventory %+v", outs[0].HashMap())
	}
	found := l.discover(t, fw, 1, 30*time.Second, func(f *protocol.Filter) {
		if err := f.AddFactFilter("os.family", "==", "RedHat"); err != nil {
			t.Fatal(err)
		}
	})
	if !slices.Equal(found, []string{"emu-eu-00004"}) {
		t.Fatalf("fact filter discovery found %v", found)
	}
}

// TestFaults_RestartWhileDisconnectedStillRestarts: a process restarts on its splay whether or
// not its broker connection is up, so a node disconnected right after restart must still leave
// provisioning mode, long before the disconnect would have ended.
func TestFaults_RestartWhileDisconnectedStillRestarts(t *testing.T) {
	l := startLab(t, 1, mustFlags(t, "index=0:disconnect=restart/5m"), nil)
	pc := l.provisionClient(t, l.framework(t, "edge-eu-1.mcollective"), "emu-eu-00000")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := l.broker.Token()
	if res, err := pc.Configure(`{"plugin.choria.server.provision":"false"}`).Token(token).Do(ctx); err != nil || len(res.AllOutputs()) != 1 || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("configure: %v", err)
	}
	if res, err := pc.Restart(token).Splay(1).Do(ctx); err != nil || len(res.AllOutputs()) != 1 || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("restart: %v", err)
	}
	testkit.WaitFor(t, time.Minute, "the disconnected node to restart out of provisioning", func() bool {
		st, _ := l.fleet.State("emu-eu-00000")
		return st.Mode == "provisioned"
	})
}
