// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
)

func TestActions_EveryActionSucceedsAgainstEmulatedNode(t *testing.T) {
	c := newCaller(t, "edge-eu-1.mcollective", 5*time.Second)
	for name, tc := range map[string]struct {
		transport rpc.Transport
		identity  string
	}{
		"conn":    {c.conn, nodeFlowConn},
		"percall": {c.percall, nodeFlowCall},
	} {
		t.Run(name, func(t *testing.T) {
			runFullFlow(t, c.node(tc.transport, tc.identity, nil), "0.29.4", `{"plugin.choria.server.provision":"false","identity":"`+tc.identity+`"}`)
		})
	}
}

// runFullFlow performs every action of a provisioning in the order the host flow does.
func runFullFlow(t *testing.T, n *rpc.Node, wantVersion, config string) {
	t.Helper()
	ctx := context.Background()

	inv, err := n.Inventory(ctx)
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	if inv.Version != wantVersion || !strings.Contains(string(inv.Raw), `"version"`) {
		t.Fatalf("inventory version %q (raw %s), want %q", inv.Version, inv.Raw, wantVersion)
	}

	jwt, err := n.JWT(ctx)
	if err != nil || jwt.JWT == "" || jwt.ECDHPublic == "" {
		t.Fatalf("jwt: %+v, %v", jwt, err)
	}
	key, err := n.Gen25519(ctx)
	if err != nil || key.PublicKey == "" {
		t.Fatalf("gen25519: %+v, %v", key, err)
	}
	csr, err := n.Gencsr(ctx, n.Identity())
	if err != nil || !strings.Contains(csr.CSR, "CERTIFICATE REQUEST") {
		t.Fatalf("gencsr: %+v, %v", csr, err)
	}
	if _, err := n.Configure(ctx, rpc.Configuration{Config: config}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	if _, err := n.Restart(ctx, 1); err != nil {
		t.Fatalf("restart: %v", err)
	}
}

func TestWrapper_SilentNodeUsesEveryTry(t *testing.T) {
	c := newCaller(t, "edge-eu-1.mcollective", 300*time.Millisecond)
	_, err := c.node(c.conn, nodeSilent, nil).Inventory(context.Background())

	if !errors.Is(err, rpc.ErrMaxTries) || !strings.Contains(err.Error(), "maximum tries reached") {
		t.Fatalf("want maximum tries reached, got %v", err)
	}
	if got := c.metrics.RPCAttempts("eu", "rpcutil#inventory"); got != rpc.TriesInventory {
		t.Fatalf("timed %d attempts, want %d", got, rpc.TriesInventory)
	}
	if got := testutil.ToFloat64(c.metrics.RPCErrors.WithLabelValues("eu", "rpcutil#inventory")); got != 1 {
		t.Fatalf("rpc_errors = %v, want 1", got)
	}
}

func TestWrapper_DuplicateIdentityIsRefused(t *testing.T) {
	// Only Conn is held to this: go-choria's RPC client (PerCall, choria-provisioner's way)
	// stops listening once every discovered target has answered, so a twin's second answer is
	// seen only when it wins a race.
	c := newCaller(t, "edge-eu-1.mcollective", 3*time.Second)
	// Both twins answer from one process back to back; a generous grace keeps a loaded machine
	// from separating them (it only delays the return of an answered call).
	conn := c.dial(t, rpc.ConnOptions{Timeout: 3 * time.Second, DuplicateGrace: 2 * time.Second})
	_, err := c.node(conn, nodeDuplicate, nil).Inventory(context.Background())
	want := "received 2 responses while expecting a response from " + nodeDuplicate
	if !errors.Is(err, rpc.ErrResponseCount) || !strings.Contains(err.Error(), want) {
		t.Fatalf("want %q, got %v", want, err)
	}
	if got := c.metrics.RPCAttempts("eu", "rpcutil#inventory"); got != rpc.TriesInventory {
		t.Fatalf("timed %d attempts, want %d", got, rpc.TriesInventory)
	}
}

func TestWrapper_NotOKReplyIsInvalidResponse(t *testing.T) {
	c := newCaller(t, "edge-eu-1.mcollective", 3*time.Second)
	_, err := c.node(c.conn, nodeJWTFails, nil).JWT(context.Background())

	want := "invalid response from " + nodeJWTFails + ": jwt store broken (1)"
	if !errors.Is(err, rpc.ErrInvalidResponse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("want %q, got %v", want, err)
	}
	if got := c.metrics.RPCAttempts("eu", "choria_provision#jwt"); got != rpc.TriesJWT {
		t.Fatalf("timed %d attempts, want %d", got, rpc.TriesJWT)
	}
}

func TestWrapper_ShutdownNotOKOnlyWarns(t *testing.T) {
	var logs bytes.Buffer
	c := newCaller(t, "edge-eu-1.mcollective", 3*time.Second)
	reg := metrics.New()
	w, err := rpc.NewWrapper(rpc.WrapperOptions{Site: "eu", Metrics: reg, Policy: backoff.Policy{Millis: []int{20}},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	never := rpc.PauseFunc(func() bool { return false })

	if err := rpc.NewNode(w, c.conn, nodeShutdownNo, token(), never).Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown with a not-OK reply must not fail: %v", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "cannot stop") {
		t.Fatalf("no warning logged: %s", logs.String())
	}
	if got := testutil.ToFloat64(reg.HelperShutdownRequests.WithLabelValues("eu")); got != 0 {
		t.Fatalf("shutdown counter = %v after a not-OK reply", got)
	}

	if err := rpc.NewNode(w, c.conn, nodeShutdownOK, token(), never).Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if got := testutil.ToFloat64(reg.HelperShutdownRequests.WithLabelValues("eu")); got != 1 {
		t.Fatalf("shutdown counter = %v after an OK reply, want 1", got)
	}
}

func TestWrapper_PausedBeforeCallSendsNothing(t *testing.T) {
	c := newCaller(t, "edge-eu-1.mcollective", 3*time.Second)
	_, err := c.node(c.conn, nodePause, rpc.PauseFunc(func() bool { return true })).Inventory(context.Background())

	if !errors.Is(err, rpc.ErrPaused) || !strings.HasSuffix(err.Error(), "provisioning is paused, cannot perform rpcutil#inventory") {
		t.Fatalf("got %v", err)
	}
	if got := c.metrics.RPCAttempts("eu", "rpcutil#inventory"); got != 0 {
		t.Fatalf("%d attempts while paused", got)
	}
}

func TestWrapper_PauseDuringRetriesStopsAtNextAttempt(t *testing.T) {
	c := newCaller(t, "edge-eu-1.mcollective", 200*time.Millisecond)
	// The pause flips once the second attempt has run to its timeout: the third never starts.
	// (The wrapper and the transport both read it within an attempt.)
	tr := &countingTransport{Transport: c.conn}
	pause := rpc.PauseFunc(func() bool { return tr.done.Load() >= 2 })

	_, err := c.node(tr, nodeSilent, pause).Inventory(context.Background())
	if !errors.Is(err, rpc.ErrPaused) {
		t.Fatalf("got %v", err)
	}
	if got := c.metrics.RPCAttempts("eu", "rpcutil#inventory"); got != 2 {
		t.Fatalf("timed %d attempts, want 2", got)
	}
}

// countingTransport counts the requests its transport has returned from.
type countingTransport struct {
	rpc.Transport
	done atomic.Int32
}

func (c *countingTransport) Request(ctx context.Context, req rpc.Request) ([]rpc.Reply, error) {
	defer c.done.Add(1)
	return c.Transport.Request(ctx, req)
}

func TestWrapper_CancelDuringBackoffReturnsPromptly(t *testing.T) {
	fw, err := shared.Region(region).Framework("edge-eu-1.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.Dial(context.Background(), fw, rpc.ConnOptions{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := metrics.New()
	// An hour between attempts: only the cancellation can end the wait.
	w, _ := rpc.NewWrapper(rpc.WrapperOptions{Site: "eu", Metrics: reg, Policy: backoff.Policy{Millis: []int{3_600_000}}})
	ctx, cancel := context.WithCancel(context.Background())
	never := rpc.PauseFunc(func() bool { return false })
	done := make(chan error, 1)
	go func() {
		_, err := rpc.NewNode(w, conn, nodeSilent, token(), never).Inventory(ctx)
		done <- err
	}()

	// The first attempt's timer is observed when it returns; the wrapper is then in its backoff.
	testkit.WaitFor(t, 30*time.Second, "the first attempt to be observed", func() bool { return reg.RPCAttempts("eu", "rpcutil#inventory") == 1 })
	cancel()

	if err := testkit.Receive(t, done, 30*time.Second, "the wrapper to stop sleeping after cancellation"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestWrapper_LockHeldByAnotherCallerEndsAtOnce(t *testing.T) {
	first := newCaller(t, "edge-eu-1.mcollective", 3*time.Second)
	second := newCaller(t, "edge-us-1.mcollective", 3*time.Second)

	if _, err := first.node(first.conn, nodeContended, nil).JWT(context.Background()); err != nil {
		t.Fatalf("first caller: %v", err)
	}
	_, err := second.node(second.conn, nodeContended, nil).JWT(context.Background())
	if !errors.Is(err, rpc.ErrLocked) || !strings.Contains(err.Error(), rpc.LockedMessage) {
		t.Fatalf("second caller: want lock error, got %v", err)
	}
	if got := second.metrics.RPCAttempts("eu", "choria_provision#jwt"); got != 1 {
		t.Fatalf("second caller made %d attempts, want 1", got)
	}
}
