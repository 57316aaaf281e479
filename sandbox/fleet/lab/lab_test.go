// SPDX-License-Identifier: Apache-2.0

package lab_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/go-choria/choria"
	"github.com/choria-io/go-choria/client/choria_provisionclient"
	"github.com/choria-io/go-choria/client/rpcutilclient"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/realnode"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
	"github.com/seed96588659/muster/sandbox/internal/choriadiscover"
)

const (
	region   = "eu"
	emulated = 200
	// olderVersion is real node 3's starting version, before its release_update
	olderVersion = "0.28.1"
	// lockWindow is the emulated nodes' lock window, short so a test can build a double provisioning
	lockWindow = 2 * time.Second
)

// shared is the one lab of this package: every real node is a process, so tests share it and
// each acts on its own nodes.
var shared *lab.Lab

// nodeBinary is the real nodes' binary, for tests that start a lab of their own.
var nodeBinary string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "lab-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := lab.BuildNodeBinary(ctx, tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	nodeBinary = bin
	shared, err = lab.Start(ctx, lab.Options{
		Dir: filepath.Join(tmp, "lab"), Regions: []string{region}, Real: 5, Emulated: emulated,
		NodeBinary: bin, Broken: []string{lab.RealIdentity(region, 4)}, EmulatedTimeScale: 0.1,
		Versions:           []string{lab.DefaultBaseVersion, lab.DefaultBaseVersion, olderVersion},
		EmulatedLockWindow: lockWindow,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start lab:", err)
		return 1
	}
	defer shared.Stop()
	// go-choria adds the discovery timeout to every RPC's timeout and rpcutil's DDL allows only
	// 2s: with the default 2s discovery timeout an inventory on a loaded CI machine could end
	// before its answer. A long one only delays calls that fail anyway; answered calls end on
	// their answer. Contexts given to calls are longer than these timeouts (rpcutil 22 s,
	// choria_provision 40 s), so unanswered calls end on the client's timeout.
	for n := 1; n <= 3; n++ {
		fw, err := shared.Region(region).Framework(lab.ClientIdentity(region, n))
		if err != nil {
			fmt.Fprintln(os.Stderr, "client framework:", err)
			return 1
		}
		fw.Configuration().DiscoveryTimeout = 20
	}
	return m.Run()
}

func framework(t testing.TB, n int) *choria.Framework {
	t.Helper()
	fw, err := shared.Region(region).Framework(lab.ClientIdentity(region, n))
	if err != nil {
		t.Fatalf("client framework: %v", err)
	}
	return fw
}

func provisionClient(t testing.TB, fw *choria.Framework, node string) *choria_provisionclient.ChoriaProvisionClient {
	t.Helper()
	pc, err := choria_provisionclient.New(fw)
	if err != nil {
		t.Fatalf("provision client: %v", err)
	}
	return pc.OptionTargets([]string{node}).OptionWorkers(1)
}

func inventory(t testing.TB, fw *choria.Framework, node string) *rpcutilclient.InventoryOutput {
	t.Helper()
	rc, err := rpcutilclient.New(fw)
	if err != nil {
		t.Fatalf("rpcutil client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rc.OptionTargets([]string{node}).OptionWorkers(1).Inventory().Do(ctx)
	if err != nil {
		t.Fatalf("inventory of %s: %v", node, err)
	}
	outs := res.AllOutputs()
	if len(outs) != 1 || !outs[0].ResultDetails().OK() {
		t.Fatalf("inventory of %s: want one OK reply, got %d", node, len(outs))
	}
	return outs[0]
}

// one asserts exactly one reply and returns its status.
func one[O interface {
	ResultDetails() *choria_provisionclient.ResultDetails
}](t testing.TB, node string, outs []O) (bool, string) {
	t.Helper()
	if len(outs) != 1 {
		t.Fatalf("%s: %d replies, want 1", node, len(outs))
	}
	d := outs[0].ResultDetails()
	return d.OK(), d.StatusMessage()
}

// waitStatus waits for a real node's status to satisfy cond.
func waitStatus(t *testing.T, node string, what string, cond func(realnode.Status) bool) realnode.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	st, err := shared.Region(region).WaitNodeStatus(ctx, node, cond)
	if err != nil {
		t.Fatalf("%s never %s: %v", node, what, err)
	}
	return st
}

func TestLab_DiscoveryFindsEveryNode(t *testing.T) {
	r := shared.Region(region)
	want := r.Nodes()
	if len(want) != 4+emulated {
		t.Fatalf("lab has %d nodes, want %d", len(want), 4+emulated)
	}
	found, _, err := choriadiscover.Broadcast(framework(t, 1), len(want), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(found, want) {
		t.Fatalf("discovered %d nodes, want %d; missing %v", len(found), len(want), testkit.Missing(want, found))
	}
}

func TestLab_InventoryFromRealAndEmulatedNodes(t *testing.T) {
	r := shared.Region(region)
	fw := framework(t, 1)
	for _, node := range []string{lab.RealIdentity(region, 2), r.EmulatedNodes()[0]} {
		out := inventory(t, fw, node)
		if out.Version() != shared.BaseVersion() {
			t.Errorf("%s reports version %q, want %q", node, out.Version(), shared.BaseVersion())
		}
		if !slices.Contains(out.Agents(), any("choria_provision")) {
			t.Errorf("%s does not list choria_provision in %v", node, out.Agents())
		}
	}
}

func TestLab_SecondCallerGetsLockMessage(t *testing.T) {
	node := lab.RealIdentity(region, 2)
	token := shared.Region(region).Broker().Token()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	first, err := provisionClient(t, framework(t, 1), node).Jwt(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, msg := one(t, node, first.AllOutputs()); !ok {
		t.Fatalf("first caller refused: %s", msg)
	}
	second, err := provisionClient(t, framework(t, 2), node).Jwt(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ok, msg := one(t, node, second.AllOutputs())
	if ok || msg != "Could not obtain provisioning lock" {
		t.Fatalf("second caller: ok=%v message %q, want the lock message", ok, msg)
	}
}

func TestLab_ConfigureAndRestartLeaveProvisioningMode(t *testing.T) {
	r := shared.Region(region)
	token := r.Broker().Token()
	fw := framework(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for _, node := range []string{lab.RealIdentity(region, 1), r.EmulatedNodes()[1]} {
		cfg, err := r.ProvisionedConfig(node)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(cfg)
		conf, err := provisionClient(t, fw, node).Configure(string(body)).Token(token).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, msg := one(t, node, conf.AllOutputs()); !ok {
			t.Fatalf("configure %s: %s", node, msg)
		}
		rs, err := provisionClient(t, fw, node).Restart(token).Splay(1).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, msg := one(t, node, rs.AllOutputs()); !ok {
			t.Fatalf("restart %s: %s", node, msg)
		}
	}

	real := lab.RealIdentity(region, 1)
	st := waitStatus(t, real, "restarted out of provisioning mode and connected", func(s realnode.Status) bool {
		return s.Starts >= 2 && !s.Provisioning && s.Connected
	})
	if exited, err := r.NodeExited(real); exited {
		t.Fatalf("%s process ended instead of re-executing: %v", real, err)
	}
	if st.Version != shared.BaseVersion() {
		t.Fatalf("%s came back as %q", real, st.Version)
	}
}

func TestLab_ReleaseUpdateReplacesTheBinary(t *testing.T) {
	r := shared.Region(region)
	node := lab.RealIdentity(region, 3)
	if got := inventory(t, framework(t, 3), node).Version(); got != olderVersion {
		t.Fatalf("%s starts at %q, want its configured %q", node, got, olderVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := provisionClient(t, framework(t, 3), node).ReleaseUpdate(shared.UpdatesURL(), r.Broker().Token(), shared.UpgradeVersion()).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, msg := one(t, node, res.AllOutputs()); !ok {
		t.Fatalf("release_update %s: %s", node, msg)
	}
	waitStatus(t, node, "back in provisioning mode at the new version", func(s realnode.Status) bool {
		return s.Starts >= 2 && s.Version == shared.UpgradeVersion() && s.Provisioning && s.Connected
	})
	v, err := realnode.BinaryVersion(filepath.Join(r.NodeDir(node), realnode.BinaryName))
	if err != nil || v != shared.UpgradeVersion() {
		t.Fatalf("node binary carries version %q (%v), want %q", v, err, shared.UpgradeVersion())
	}
	if got := inventory(t, framework(t, 3), node).Version(); got != shared.UpgradeVersion() {
		t.Fatalf("inventory after upgrade reports %q, want %q", got, shared.UpgradeVersion())
	}
}

func TestLab_NodeThatCannotStartIsReported(t *testing.T) {
	r := shared.Region(region)
	broken := lab.RealIdentity(region, 4)
	reason, ok := r.Failed()[broken]
	if !ok || !strings.Contains(reason, "broken") {
		t.Fatalf("failed nodes %v: want %s failing on its security provider", r.Failed(), broken)
	}
	if got := r.RealNodes(); slices.Contains(got, broken) || len(got) != 4 {
		t.Fatalf("real nodes %v", got)
	}
	info, err := lab.ReadInfo(shared.InfoFile())
	if err != nil {
		t.Fatal(err)
	}
	ri := info.Regions[region]
	if len(ri.FailedNodes) != 1 || ri.FailedNodes[0].Identity != broken || len(ri.RealNodes) != 4 || ri.EmulatedCount != emulated {
		t.Fatalf("lab.json region: %+v", ri)
	}
	if ri.ProvisioningPassword == "" || ri.ProvisioningToken == "" || ri.JWTSignerPublicKey == "" || len(ri.Clients) != 3 || ri.ClientConfig == "" {
		t.Fatalf("lab.json misses client material: %+v", ri)
	}
	if _, err := tls.LoadX509KeyPair(ri.CA, ri.CAKey); err != nil {
		t.Fatalf("lab.json ca %s and ca_key %s are not a pair: %v", ri.CA, ri.CAKey, err)
	}
}

// TestLab_ShutdownEndsTheRealNodeProcess: go-choria's shutdown action draws a splay of 0-9 s and,
// at 0 s, its os.Exit races everything after the action returns: the reply publish and also the
// recorder's line (written after the action, before the reply is handed on). So one run in ten
// may legitimately have neither. The agent's own "Shutting server down via request" log line is
// written inside the action, before the exit goroutine starts, so it always proves the request
// was accepted; the recorded line is required whenever a reply came (the reply implies it).
func TestLab_ShutdownEndsTheRealNodeProcess(t *testing.T) {
	r := shared.Region(region)
	node := lab.RealIdentity(region, 5)
	caller := "choria=" + lab.ClientIdentity(region, 1)
	// Longer than the client's own timeout (20 s agent + 20 s discovery): a shutdown that gets
	// no reply must end on that timeout, not on ctx (see choriadiscover.Broadcast about go-choria's race).
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := provisionClient(t, framework(t, 1), node).Shutdown(r.Broker().Token()).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	replied := false
	switch outs := res.AllOutputs(); len(outs) {
	case 0:
		t.Logf("%s exited before its reply was published (splay 0)", node)
	case 1:
		if d := outs[0].ResultDetails(); !d.OK() {
			t.Fatalf("shutdown %s: %s", node, d.StatusMessage())
		}
		replied = true
	default:
		t.Fatalf("%s: %d replies, want at most 1", node, len(outs))
	}
	deadline := time.Now().Add(time.Minute)
	for {
		exited, err := r.NodeExited(node)
		if exited {
			if err != nil {
				t.Fatalf("%s exited with %v, want a clean exit", node, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still running a minute after shutdown", node)
		}
		time.Sleep(100 * time.Millisecond)
	}
	serverLog, err := os.ReadFile(filepath.Join(r.NodeDir(node), realnode.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(strings.Split(string(serverLog), "\n"), func(l string) bool {
		return strings.Contains(l, "Shutting server down via request") && strings.Contains(l, caller)
	}) {
		t.Fatalf("%s: the provision agent never logged accepting the shutdown from %s", node, caller)
	}
	acts, err := recorder.ReadFile(shared.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	recorded := slices.ContainsFunc(acts, func(a recorder.Action) bool {
		return a.Node == node && a.Action == "choria_provision#shutdown" && a.OK && a.Caller == caller
	})
	if replied && !recorded {
		t.Fatalf("%s: replied to the shutdown but no successful choria_provision#shutdown in %s", node, shared.ActionsFile())
	}
}

// TestLab_DoubleProvisioningIsReportedWithEvidence makes a second caller provision an emulated
// node after the first caller's lock lapsed, within one episode.
func TestLab_DoubleProvisioningIsReportedWithEvidence(t *testing.T) {
	r := shared.Region(region)
	node := r.EmulatedNodes()[2]
	token := r.Broker().Token()
	cfg, err := r.ProvisionedConfig(node)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(cfg)
	configure := func(n int) (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := provisionClient(t, framework(t, n), node).Configure(string(body)).Token(token).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return one(t, node, res.AllOutputs())
	}
	if ok, msg := configure(1); !ok {
		t.Fatalf("first configure: %s", msg)
	}
	deadline := time.Now().Add(lockWindow + time.Minute)
	for {
		ok, msg := configure(2)
		if ok {
			break
		}
		if msg != "Could not obtain provisioning lock" || time.Now().After(deadline) {
			t.Fatalf("second caller never got the node: %s", msg)
		}
		time.Sleep(250 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rs, err := provisionClient(t, framework(t, 2), node).Restart(token).Splay(1).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ok, msg := one(t, node, rs.AllOutputs()); !ok {
		t.Fatalf("restart: %s", msg)
	}

	rp, err := audit.FromFile(shared.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	var d *audit.Double
	for i := range rp.DoubleProvisioned {
		if rp.DoubleProvisioned[i].Node == node {
			d = &rp.DoubleProvisioned[i]
		}
	}
	e1, e2 := "choria="+lab.ClientIdentity(region, 1), "choria="+lab.ClientIdentity(region, 2)
	if d == nil || !slices.Equal(d.Callers, []string{e1, e2}) || d.Episode != 1 || len(d.Evidence) != 3 {
		t.Fatalf("double provisioning of %s not reported as expected: %+v", node, d)
	}
	want := []struct{ action, caller string }{{audit.Configure, e1}, {audit.Configure, e2}, {audit.Restart, e2}}
	for i, w := range want {
		if ev := d.Evidence[i]; ev.Action != w.action || ev.Caller != w.caller || !ev.OK || ev.Region != region {
			t.Errorf("evidence %d: %+v, want %s by %s", i, ev, w.action, w.caller)
		}
	}
	if c := rp.Nodes[node].Actions[audit.Configure]; c.Callers[e1] != 1 || c.Callers[e2] < 1 || c.OK != 2 {
		t.Errorf("configure counts %+v", c)
	}
}

// TestLab_ReportOfThisRun runs last: it reads what the tests above did to the nodes.
func TestLab_ReportOfThisRun(t *testing.T) {
	rp, err := audit.FromFile(shared.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	e := func(n int) string { return "choria=" + lab.ClientIdentity(region, n) }
	r1, r2, r3 := lab.RealIdentity(region, 1), lab.RealIdentity(region, 2), lab.RealIdentity(region, 3)
	if !slices.Contains(rp.Provisioned, r1) || slices.Contains(rp.Provisioned, r2) || slices.Contains(rp.Provisioned, r3) {
		t.Errorf("provisioned %v: want %s and not %s, %s", rp.Provisioned, r1, r2, r3)
	}
	// only the one TestLab_DoubleProvisioningIsReportedWithEvidence constructed
	if len(rp.DoubleProvisioned) != 1 || rp.DoubleProvisioned[0].Node != shared.Region(region).EmulatedNodes()[2] {
		t.Errorf("double provisioned: %+v", rp.DoubleProvisioned)
	}
	jwt := rp.Nodes[r2].Actions["choria_provision#jwt"]
	if jwt == nil || jwt.OK != 1 || jwt.Failed != 1 || jwt.Callers[e(1)] != 1 || jwt.Callers[e(2)] != 1 {
		t.Errorf("%s jwt counts %+v", r2, jwt)
	}
	ru := rp.Nodes[r3].Actions["choria_provision#release_update"]
	if ru == nil || ru.OK != 1 || ru.Callers[e(3)] != 1 {
		t.Errorf("%s release_update counts %+v", r3, ru)
	}
	if rp.Nodes[r1].Actions["choria_provision#restart"].OK != 1 {
		t.Errorf("%s restart not recorded: %+v", r1, rp.Nodes[r1].Actions)
	}
}
