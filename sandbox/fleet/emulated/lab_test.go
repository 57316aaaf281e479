// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/choria-io/go-choria/choria"
	"github.com/choria-io/go-choria/client/choria_provisionclient"
	"github.com/choria-io/go-choria/client/rpcutilclient"
	"github.com/choria-io/go-choria/inter"
	"github.com/choria-io/go-choria/protocol"
	"github.com/choria-io/go-choria/providers/discovery/broadcast"
	"github.com/nats-io/nats.go"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/broker"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// testLab is one embedded broker with an emulated fleet on it and an action log.
type testLab struct {
	broker  *broker.Broker
	fleet   *Fleet
	actions string
	rec     *recorder.Recorder
}

func startLab(t testing.TB, count int, set *faults.Set, tune func(*Config)) *testLab {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	b, err := broker.Start(ctx, broker.Options{Dir: filepath.Join(dir, "broker"), Region: "eu"})
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { b.Stop() })
	jwt, err := b.ProvisioningJWT(true)
	if err != nil {
		t.Fatalf("provisioning jwt: %v", err)
	}
	tlsc, err := b.ClientTLS("emulated-eu.mcollective")
	if err != nil {
		t.Fatalf("client tls: %v", err)
	}
	actions := filepath.Join(dir, "actions.jsonl")
	rec, err := recorder.Open(actions, nil)
	if err != nil {
		t.Fatalf("recorder: %v", err)
	}
	t.Cleanup(func() { rec.Close() })
	cfg := Config{
		BrokerURL: b.URL(), TLS: tlsc, Region: "eu", Prefix: "emu-eu-", Count: count,
		Token: b.Token(), JWT: jwt, Version: "0.29.4", Faults: set, Recorder: rec,
		TimeScale: 0.1, BootTime: 50 * time.Millisecond,
	}
	if tune != nil {
		tune(&cfg)
	}
	f, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start fleet: %v", err)
	}
	t.Cleanup(func() { f.Stop() })
	return &testLab{broker: b, fleet: f, actions: actions, rec: rec}
}

func (l *testLab) framework(t testing.TB, identity string) *choria.Framework {
	t.Helper()
	fw, err := l.broker.ClientFramework(identity)
	if err != nil {
		t.Fatalf("client framework %s: %v", identity, err)
	}
	// go-choria adds the discovery timeout to every RPC's timeout; a long one keeps a loaded
	// machine from failing calls that do get answered (they end on the answer, not the timeout).
	fw.Configuration().DiscoveryTimeout = 20
	return fw
}

func (l *testLab) provisionClient(t testing.TB, fw *choria.Framework, target string) *choria_provisionclient.ChoriaProvisionClient {
	t.Helper()
	pc, err := choria_provisionclient.New(fw)
	if err != nil {
		t.Fatalf("provision client: %v", err)
	}
	return pc.OptionTargets([]string{target}).OptionWorkers(1)
}

func (l *testLab) rpcutil(t testing.TB, fw *choria.Framework, target string) *rpcutilclient.RpcutilClient {
	t.Helper()
	rc, err := rpcutilclient.New(fw)
	if err != nil {
		t.Fatalf("rpcutil client: %v", err)
	}
	return rc.OptionTargets([]string{target}).OptionWorkers(1)
}

// goChoriaDiscover runs go-choria's own broadcast discoverer in collective provisioning.
func goChoriaDiscover(t testing.TB, fw *choria.Framework, timeout time.Duration, tune func(*protocol.Filter)) []string {
	t.Helper()
	if raceEnabled {
		t.Skip("go-choria's client races with itself when a request ends on its timeout; see race_on_test.go")
	}
	f := protocol.NewFilter()
	f.AddAgentFilter("choria_provision")
	if tune != nil {
		tune(f)
	}
	found, err := broadcast.New(fw).Discover(context.Background(), broadcast.Filter(f), broadcast.Timeout(timeout), broadcast.Collective("provisioning"))
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	sort.Strings(found)
	return found
}

// natsConn connects as a provisioning client (CA certificate + provisioner user).
func (l *testLab) natsConn(t testing.TB, identity string) *nats.Conn {
	t.Helper()
	tlsc, err := l.broker.ClientTLS(identity)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(l.broker.URL(), nats.Secure(tlsc), nats.UserInfo(broker.ProvisioningUser, l.broker.ProvisioningPassword()))
	if err != nil {
		t.Fatalf("connect as %s: %v", identity, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// rawRequest builds a request with go-choria (signed, protocol v1 transport), publishes it with
// nats.go and collects replies, decoding each with go-choria as a client does, until window
// ends or, once want replies are in, a further half second brings no more (so an extra reply
// is still seen, and a loaded machine only makes the wait longer, never the result wrong).
// It is used where a go-choria client would end on its timeout (see race_on_test.go).
func (l *testLab) rawRequest(t testing.TB, fw *choria.Framework, agent string, body []byte, target string, filter *protocol.Filter, want int, window time.Duration) []protocol.Reply {
	t.Helper()
	nc := l.natsConn(t, fw.Configuration().Identity)
	data, replyTo := signedRequest(t, fw, agent, target, body, filter)
	subject := "provisioning.broadcast.agent." + agent
	if target != "" {
		subject = "provisioning.node." + target
	}
	sub, err := nc.SubscribeSync(replyTo)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Publish(subject, data); err != nil {
		t.Fatal(err)
	}
	var out []protocol.Reply
	deadline := time.Now().Add(window)
	for {
		wait := time.Until(deadline)
		if want > 0 && len(out) >= want {
			wait = min(wait, 500*time.Millisecond)
		}
		if wait <= 0 {
			return out
		}
		m, err := sub.NextMsg(wait)
		if err != nil {
			return out
		}
		rep, err := fw.NewReplyFromTransportJSON(m.Data, false)
		if err != nil {
			t.Fatalf("reply from the fleet does not decode with go-choria: %v", err)
		}
		out = append(out, rep)
	}
}

// signedRequest builds one request with go-choria, signed and in a protocol v1 transport as a
// client sends it: direct to target, or a broadcast when target is empty. It returns the
// transport JSON and the subject replies come back on.
func signedRequest(t testing.TB, fw *choria.Framework, agent, target string, body []byte, filter *protocol.Filter) ([]byte, string) {
	t.Helper()
	msg, err := fw.NewMessage(body, agent, "provisioning", inter.RequestMessageType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if target != "" {
		msg.SetDiscoveredHosts([]string{target})
		if err := msg.SetType(inter.DirectRequestMessageType); err != nil {
			t.Fatal(err)
		}
	}
	if filter != nil {
		msg.SetFilter(filter)
	}
	if err := msg.SetReplyTo(msg.ReplyTarget()); err != nil {
		t.Fatal(err)
	}
	tr, err := msg.Transport(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, err := tr.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return data, msg.ReplyTo()
}

// discover is broadcast discovery (agent filter choria_provision) over rawRequest, expecting
// want answers within window; it returns every sender, sorted, duplicates kept.
func (l *testLab) discover(t testing.TB, fw *choria.Framework, want int, window time.Duration, tune func(*protocol.Filter)) []string {
	t.Helper()
	f := protocol.NewFilter()
	f.AddAgentFilter("choria_provision")
	if tune != nil {
		tune(f)
	}
	var found []string
	for _, r := range l.rawRequest(t, fw, "discovery", []byte(base64.StdEncoding.EncodeToString([]byte("ping"))), "", f, want, window) {
		if string(r.Message()) != "pong" {
			t.Fatalf("discovery reply %q from %s", r.Message(), r.SenderID())
		}
		found = append(found, r.SenderID())
	}
	sort.Strings(found)
	return found
}

// rawInventory sends rpcutil#inventory to one node, expecting want replies within window.
func (l *testLab) rawInventory(t testing.TB, fw *choria.Framework, target string, want int, window time.Duration) []protocol.Reply {
	t.Helper()
	return l.rawRequest(t, fw, "rpcutil", []byte(`{"agent":"rpcutil","action":"inventory","data":{}}`), target, nil, want, window)
}

// inventory asks one node for its inventory and returns the outputs (one per reply).
func inventory(t testing.TB, rc *rpcutilclient.RpcutilClient) []*rpcutilclient.InventoryOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rc.Inventory().Do(ctx)
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	return res.AllOutputs()
}

// readActions returns the recorded actions of one node.
func (l *testLab) readActions(t testing.TB, node string) []recorder.Action {
	t.Helper()
	all, err := recorder.ReadFile(l.actions)
	if err != nil {
		t.Fatalf("read actions: %v", err)
	}
	var out []recorder.Action
	for _, a := range all {
		if a.Node == node {
			out = append(out, a)
		}
	}
	return out
}

func TestFleet_BroadcastDiscoveryFindsEveryNode(t *testing.T) {
	l := startLab(t, 200, nil, nil)
	fw := l.framework(t, "edge-eu-1.mcollective")

	found := l.discover(t, fw, 200, 30*time.Second, nil)
	want := l.fleet.Identities()
	sort.Strings(want)
	if !slices.Equal(found, want) {
		t.Fatalf("discovered %d nodes, want the fleet's %d (first %v)", len(found), len(want), found[:min(3, len(found))])
	}

	regex := l.discover(t, fw, 5, 30*time.Second, func(f *protocol.Filter) { f.AddIdentityFilter("/^emu-eu-0001[0-4]$/") })
	if !slices.Equal(regex, []string{"emu-eu-00010", "emu-eu-00011", "emu-eu-00012", "emu-eu-00013", "emu-eu-00014"}) {
		t.Fatalf("identity regex discovery found %v", regex)
	}
	none := l.discover(t, fw, 0, 2*time.Second, func(f *protocol.Filter) { f.AddAgentFilter("puppet") })
	if len(none) != 0 {
		t.Fatalf("discovery for an agent the nodes lack found %d nodes", len(none))
	}
}

func TestFleet_GoChoriaBroadcastDiscovererFindsEveryNode(t *testing.T) {
	if raceEnabled {
		t.Skip("go-choria's client races with itself when a request ends on its timeout; see race_on_test.go")
	}
	l := startLab(t, 200, nil, nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	found := goChoriaDiscover(t, fw, 4*time.Second, nil)
	want := l.fleet.Identities()
	sort.Strings(want)
	if !slices.Equal(found, want) {
		t.Fatalf("go-choria's broadcast discovery found %d nodes, want the fleet's %d", len(found), len(want))
	}
}

func TestFleet_InventoryConfigureRestart(t *testing.T) {
	l := startLab(t, 20, nil, nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	const id = "emu-eu-00007"

	outs := inventory(t, l.rpcutil(t, fw, id))
	if len(outs) != 1 {
		t.Fatalf("inventory replies = %d", len(outs))
	}
	inv := outs[0]
	if !inv.ResultDetails().OK() || inv.Version() != "0.29.4" || !inv.Upgradable() || inv.MainCollective() != "provisioning" {
		t.Fatalf("inventory = ok %v version %q upgradable %v main %q", inv.ResultDetails().OK(), inv.Version(), inv.Upgradable(), inv.MainCollective())
	}
	if !slices.Contains(inv.Agents(), any("choria_provision")) || !slices.Equal(inv.Collectives(), []any{"provisioning"}) {
		t.Fatalf("inventory agents %v collectives %v", inv.Agents(), inv.Collectives())
	}
	if inv.Facts()["identity"] != id {
		t.Fatalf("inventory facts %v", inv.Facts())
	}

	pc := l.provisionClient(t, fw, id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := l.broker.Token()

	restart, err := pc.Restart(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := restart.AllOutputs()[0].ResultDetails(); got.OK() || got.StatusMessage() != "Configuration /etc/choria/server.conf enables provisioning, restart cannot continue" {
		t.Fatalf("restart before configure: ok %v %q", got.OK(), got.StatusMessage())
	}

	empty, err := pc.Configure("").Token(token).Do(ctx)
	if err == nil {
		// The client's DDL validation may refuse the empty config before sending it.
		if got := empty.AllOutputs()[0].ResultDetails(); got.OK() || got.StatusMessage() != "Did not receive any configuration to write, cannot write a empty configuration file" {
			t.Fatalf("empty configure: ok %v %q", got.OK(), got.StatusMessage())
		}
	}

	conf, err := pc.Configure(`{"plugin.choria.server.provision":"false","identity":"emu-eu-00007"}`).Token(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := conf.AllOutputs()[0]; !got.ResultDetails().OK() || got.Message() != "Wrote 3 lines to /etc/choria/server.conf" {
		t.Fatalf("configure: ok %v %q %q", got.ResultDetails().OK(), got.ResultDetails().StatusMessage(), got.Message())
	}

	restart, err = pc.Restart(token).Splay(1).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := restart.AllOutputs()[0].ResultDetails(); !got.OK() {
		t.Fatalf("restart after configure: %q", got.StatusMessage())
	}
	testkit.WaitFor(t, 30*time.Second, "the restarted node to leave provisioning", func() bool {
		st, _ := l.fleet.State(id)
		return st.Mode == "provisioned"
	})
	found := l.discover(t, fw, 19, 30*time.Second, nil)
	if slices.Contains(found, id) || len(found) != 19 {
		t.Fatalf("after restart discovery found %d nodes, including %s: %v", len(found), id, slices.Contains(found, id))
	}

	var got []string
	for _, a := range l.readActions(t, id) {
		got = append(got, a.Action)
		if a.Caller != "choria=edge-eu-1.mcollective" {
			t.Errorf("recorded caller %q", a.Caller)
		}
	}
	want := []string{"rpcutil#inventory", "choria_provision#restart", "choria_provision#configure", "choria_provision#configure", "choria_provision#restart"}
	if empty == nil {
		want = slices.Delete(want, 2, 3)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
}
