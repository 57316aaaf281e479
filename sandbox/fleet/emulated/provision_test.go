// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/choria-io/go-choria/lifecycle"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
)

func TestProvision_SecondCallerGetsTheLockMessage(t *testing.T) {
	l := startLab(t, 5, nil, nil)
	const id = "emu-eu-00002"
	first := l.provisionClient(t, l.framework(t, "edge-eu-1.mcollective"), id)
	second := l.provisionClient(t, l.framework(t, "edge-eu-2.mcollective"), id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := l.broker.Token()

	res, err := first.Jwt(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out := res.AllOutputs(); len(out) != 1 || !out[0].ResultDetails().OK() {
		t.Fatalf("first caller's jwt failed: %+v", out)
	}
	res, err = second.Jwt(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := res.AllOutputs()
	if len(out) != 1 || out[0].ResultDetails().OK() || out[0].ResultDetails().StatusMessage() != "Could not obtain provisioning lock" {
		t.Fatalf("second caller: %d replies, ok %v, %q", len(out), out[0].ResultDetails().OK(), out[0].ResultDetails().StatusMessage())
	}
	// The holder keeps the node; restart is not behind the lock (the real agent does not wrap it).
	res, err = first.Jwt(token).Do(ctx)
	if err != nil || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("lock holder refused after contention: %v", err)
	}
	st, _ := l.fleet.State(id)
	if st.LockedBy != "edge-eu-1.mcollective.choria=edge-eu-1.mcollective" {
		t.Fatalf("locked by %q", st.LockedBy)
	}
	acts := l.readActions(t, id)
	if len(acts) != 3 || acts[1].OK || acts[1].Error != "Could not obtain provisioning lock" || acts[1].Caller != "choria=edge-eu-2.mcollective" {
		t.Fatalf("recorded %+v", acts)
	}
}

func TestProvision_LockExpiresAfterItsWindow(t *testing.T) {
	l := startLab(t, 1, nil, func(c *Config) { c.LockWindow = time.Second })
	const id = "emu-eu-00000"
	first := l.provisionClient(t, l.framework(t, "edge-eu-1.mcollective"), id)
	second := l.provisionClient(t, l.framework(t, "edge-eu-2.mcollective"), id)
	ctx := context.Background()
	if _, err := first.Jwt(l.broker.Token()).Do(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 20*time.Second, "the lock to expire", func() bool {
		st, _ := l.fleet.State(id)
		return st.LockedBy == ""
	})
	res, err := second.Jwt(l.broker.Token()).Do(ctx)
	if err != nil || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("second caller refused after the window: %v %q", err, res.AllOutputs()[0].ResultDetails().StatusMessage())
	}
}

func TestProvision_CryptoActionsAndToken(t *testing.T) {
	l := startLab(t, 3, nil, nil)
	const id = "emu-eu-00001"
	pc := l.provisionClient(t, l.framework(t, "edge-eu-1.mcollective"), id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := l.broker.Token()

	bad, err := pc.Jwt("wrong").Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := bad.AllOutputs()[0].ResultDetails(); d.OK() || d.StatusMessage() != "Incorrect provision token supplied" {
		t.Fatalf("wrong token: ok %v %q", d.OK(), d.StatusMessage())
	}

	jwtRes, err := pc.Jwt(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	j := jwtRes.AllOutputs()[0]
	want, _ := l.broker.ProvisioningJWT(true)
	if j.Jwt() == "" || len(j.Jwt()) != len(want) {
		t.Fatalf("jwt reply %q", j.Jwt())
	}
	if pub, err := hex.DecodeString(j.EcdhPublic()); err != nil || len(pub) != 32 {
		t.Fatalf("ecdh_public %q: %v", j.EcdhPublic(), err)
	}

	const nonce = "a-nonce-from-the-provisioner"
	edRes, err := pc.Gen25519(nonce, token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ed := edRes.AllOutputs()[0]
	pub, err := hex.DecodeString(ed.PublicKey())
	if err != nil || len(pub) != ed25519.PublicKeySize {
		t.Fatalf("public_key %q: %v", ed.PublicKey(), err)
	}
	sig, err := hex.DecodeString(ed.Signature())
	if err != nil || !ed25519.Verify(pub, []byte(nonce), sig) {
		t.Fatalf("nonce signature does not verify with the returned key (err %v)", err)
	}

	csrRes, err := pc.Gencsr(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := csrRes.AllOutputs()[0]
	block, _ := pem.Decode([]byte(c.Csr()))
	if block == nil {
		t.Fatalf("csr is not PEM: %q", c.Csr())
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if csr.Subject.CommonName != id || csr.CheckSignature() != nil || c.Ssldir() != "/etc/choria/ssl" {
		t.Fatalf("csr CN %q signature %v ssldir %q", csr.Subject.CommonName, csr.CheckSignature(), c.Ssldir())
	}

	rp, err := pc.Reprovision(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := rp.AllOutputs()[0].ResultDetails(); d.OK() || d.StatusMessage() != "Server is already in provisioning mode, cannot enable provisioning mode again" {
		t.Fatalf("reprovision: %q", d.StatusMessage())
	}
}

func TestProvision_ReleaseUpdateChangesTheVersion(t *testing.T) {
	no := false
	set := faults.NewSet(faults.Rule{Select: faults.Selector{Identity: "emu-eu-00001"}, Fault: faults.Fault{Upgradable: &no}})
	l := startLab(t, 2, set, nil)
	fw := l.framework(t, "edge-eu-1.mcollective")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := l.broker.Token()

	res, err := l.provisionClient(t, fw, "emu-eu-00000").ReleaseUpdate("http://127.0.0.1:1/repo", token, "0.31.0").Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.AllOutputs()[0]; !d.ResultDetails().OK() || d.Message() != "Restarting Choria Server after 2s" {
		t.Fatalf("release_update: %q", d.ResultDetails().StatusMessage())
	}
	testkit.WaitFor(t, 30*time.Second, "the node to restart into 0.31.0", func() bool {
		st, _ := l.fleet.State("emu-eu-00000")
		return st.Mode == "provisioning" && st.Version == "0.31.0"
	})
	if outs := inventory(t, l.rpcutil(t, fw, "emu-eu-00000")); len(outs) != 1 || outs[0].Version() != "0.31.0" {
		t.Fatalf("after release_update the node reports %q", outs[0].Version())
	}

	res, err = l.provisionClient(t, fw, "emu-eu-00001").ReleaseUpdate("http://127.0.0.1:1/repo", token, "0.31.0").Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.AllOutputs()[0].ResultDetails(); d.OK() || d.StatusMessage() != "Version updates is not enabled in the configuration" {
		t.Fatalf("release_update on a non-upgradable node: %q", d.StatusMessage())
	}
	if outs := inventory(t, l.rpcutil(t, fw, "emu-eu-00001")); outs[0].Upgradable() {
		t.Fatal("upgradable=false fault not reported by inventory")
	}
}

func TestProvision_ShutdownTakesTheNodeAway(t *testing.T) {
	l := startLab(t, 2, nil, nil)
	pc := l.provisionClient(t, l.framework(t, "edge-eu-1.mcollective"), "emu-eu-00001")
	res, err := pc.Shutdown(l.broker.Token()).Do(context.Background())
	if err != nil || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("shutdown: %v", err)
	}
	testkit.WaitFor(t, 30*time.Second, "the node to shut down", func() bool {
		st, _ := l.fleet.State("emu-eu-00001")
		return st.Mode == "shutdown"
	})
}

func TestProvision_ReleaseUpdateChecksTheRepository(t *testing.T) {
	mux := http.NewServeMux()
	spec := fmt.Sprintf("/repo/0.31.0/%s/%s/release.json", runtime.GOOS, runtime.GOARCH)
	mux.HandleFunc(spec, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"binary":"choria.bz2","hash":"x"}`) })
	repo := httptest.NewServer(mux)
	t.Cleanup(repo.Close)

	l := startLab(t, 2, nil, func(c *Config) { c.CheckReleases = true })
	fw := l.framework(t, "edge-eu-1.mcollective")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	res, err := l.provisionClient(t, fw, "emu-eu-00001").ReleaseUpdate(repo.URL+"/repo", l.broker.Token(), "0.99.0").Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Update to version 0.99.0 failed, release rolled back: could not fetch release from %s/repo/0.99.0/%s/%s/release.json: 404 Not Found", repo.URL, runtime.GOOS, runtime.GOARCH)
	if d := res.AllOutputs()[0].ResultDetails(); d.OK() || d.StatusMessage() != want {
		t.Fatalf("release_update to a missing version: ok %v %q", d.OK(), d.StatusMessage())
	}
	res, err = l.provisionClient(t, fw, "emu-eu-00001").ReleaseUpdate(repo.URL+"/repo", l.broker.Token(), "0.31.0").Do(ctx)
	if err != nil || !res.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("release_update to a published version failed: %v %q", err, res.AllOutputs()[0].ResultDetails().StatusMessage())
	}
}

// TestProvision_PendingRestartLeavesLaterActionsUnanswered: once a real node accepted a restart,
// its restart goroutine holds the provision agent's mutex through the splay until the process
// is replaced, so later choria_provision requests are never answered; only the lock check (a
// separate mutex) and other agents still answer.
func TestProvision_PendingRestartLeavesLaterActionsUnanswered(t *testing.T) {
	// TimeScale 30: the restart's 2 s splay (Splay 1) lasts a minute, far past this test's requests.
	l := startLab(t, 2, nil, func(c *Config) { c.TimeScale = 30 })
	ev := l.watchEvents(t)
	const id = "emu-eu-00001"
	fw := l.framework(t, "edge-eu-1.mcollective")
	pc := l.provisionClient(t, fw, id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token := l.broker.Token()

	conf, err := pc.Configure(`{"plugin.choria.server.provision":"false"}`).Token(token).Do(ctx)
	if err != nil || len(conf.AllOutputs()) != 1 || !conf.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("configure: %v", err)
	}
	rs, err := pc.Restart(token).Splay(1).Do(ctx)
	if err != nil || len(rs.AllOutputs()) != 1 || !rs.AllOutputs()[0].ResultDetails().OK() {
		t.Fatalf("restart: %v", err)
	}

	body := fmt.Sprintf(`{"agent":"choria_provision","action":"restart","data":{"token":%q,"splay":1}}`, token)
	if got := l.rawRequest(t, fw, "choria_provision", []byte(body), id, nil, 0, 3*time.Second); len(got) != 0 {
		t.Fatalf("a second restart during the pending one got %d replies, want none", len(got))
	}
	// configure, restart, then the unanswered restart (recorded once the node has seen it)
	testkit.WaitFor(t, 30*time.Second, "the second restart to be recorded", func() bool {
		return len(l.readActions(t, id)) >= 3
	})
	if acts := l.readActions(t, id); len(acts) != 3 || acts[2].Action != "choria_provision#restart" || acts[2].OK || acts[2].Error != pendingExit {
		t.Fatalf("recorded %+v, want the second restart not answered", acts)
	}

	other, err := l.provisionClient(t, l.framework(t, "edge-eu-2.mcollective"), id).Jwt(token).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out := other.AllOutputs(); len(out) != 1 || out[0].ResultDetails().StatusMessage() != lockedError {
		t.Fatalf("another caller during the pending restart: %d replies, want the lock message", len(out))
	}
	if outs := inventory(t, l.rpcutil(t, fw, id)); len(outs) != 1 || !outs[0].ResultDetails().OK() {
		t.Fatalf("inventory during the pending restart: %d replies", len(outs))
	}
	// the real agent announces the shutdown when the restart starts, before its splay
	testkit.WaitFor(t, 30*time.Second, "the shutdown event of the restarting node", func() bool {
		return ev.has(lifecycle.Shutdown, id)
	})
	if st, _ := l.fleet.State(id); st.Mode != "provisioning" {
		t.Fatalf("node is %s during its restart splay, want provisioning", st.Mode)
	}
}
