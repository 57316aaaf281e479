// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/emulated"
)

// startVerifyingFleet starts one emulated node that verifies every request's certificate and
// signature against the lab CA, as a provisioning server whose JWT has chs true does.
func startVerifyingFleet(t *testing.T) (*emulated.Fleet, string) {
	t.Helper()
	r := shared.Region(region)
	f, err := emulated.Start(context.Background(), emulated.Config{
		BrokerURL: r.Broker().URL(),
		Region:    region,
		Prefix:    "secure-eu-",
		Count:     1,
		Token:     token(),
		JWT:       r.ProvisioningJWT(),
		Version:   "0.29.4",
		CallerCA:  r.Broker().CA().Pool(),
	})
	if err != nil {
		t.Fatalf("verifying fleet: %v", err)
	}
	t.Cleanup(func() { f.Stop() })
	return f, f.Identities()[0]
}

func dialSigning(t *testing.T, c *caller, mode rpc.Signing) *rpc.Conn {
	t.Helper()
	return c.dial(t, rpc.ConnOptions{Signing: mode, DuplicateGrace: time.Millisecond})
}

// TestConn_VerifyingNodeRefusesUnsignedRequests: a node that verifies (chs true) answers signed
// requests and drops unsigned ones; a node that does not (chs false) answers both.
func TestConn_VerifyingNodeRefusesUnsignedRequests(t *testing.T) {
	fleet, secure := startVerifyingFleet(t)
	c := newCaller(t, "edge-eu-sign.mcollective", 5*time.Second)
	ctx := context.Background()
	inv := func(conn *rpc.Conn, identity string, unsigned bool, timeout time.Duration) []rpc.Reply {
		t.Helper()
		replies, err := conn.Request(ctx, rpc.Request{Agent: "rpcutil", Action: "inventory", Identity: identity, Data: json.RawMessage(`{}`), Unsigned: unsigned, Timeout: timeout})
		if err != nil {
			t.Fatalf("inventory of %s: %v", identity, err)
		}
		return replies
	}

	auto := dialSigning(t, c, rpc.SignAuto)
	never := dialSigning(t, c, rpc.SignNever)
	always := dialSigning(t, c, rpc.SignAlways)

	for name, conn := range map[string]*rpc.Conn{"auto": auto, "always": always} {
		if got := inv(conn, secure, false, 10*time.Second); len(got) != 1 || !got[0].OK() {
			t.Fatalf("%s: signed request to the verifying node: %+v", name, got)
		}
	}
	// Unsigned marks are ignored under SignAlways.
	if got := inv(always, secure, true, 10*time.Second); len(got) != 1 || !got[0].OK() {
		t.Fatalf("always with Unsigned: %+v", got)
	}

	for name, tc := range map[string]struct {
		conn     *rpc.Conn
		unsigned bool
	}{"auto with Unsigned": {auto, true}, "never": {never, false}} {
		before := fleet.Stats().Invalid
		// The node drops the request; the reply window only has to outlast the drop, which the
		// Invalid count below proves happened.
		if got := inv(tc.conn, secure, tc.unsigned, time.Second); len(got) != 0 {
			t.Fatalf("%s: the verifying node answered an unsigned request: %+v", name, got)
		}
		testkit.WaitFor(t, 10*time.Second, "the refusal to be counted", func() bool { return fleet.Stats().Invalid > before })
	}

	// The lab's nodes, emulated and real, have chs false: unsigned and signed both work.
	for _, identity := range []string{nodeBench, realBench} {
		for name, tc := range map[string]struct {
			conn     *rpc.Conn
			unsigned bool
		}{"auto": {auto, false}, "auto with Unsigned": {auto, true}, "never": {never, false}, "always": {always, false}} {
			if got := inv(tc.conn, identity, tc.unsigned, 10*time.Second); len(got) != 1 || !got[0].OK() || got[0].Sender != identity {
				t.Fatalf("%s, %s: %+v", identity, name, got)
			}
		}
	}
}

// TestNode_SetSigningStopsSigningForThatNodeOnly: after SetSigning(false) a node's requests go
// unsigned, which a verifying node drops, while another node bound to the same Conn still signs.
func TestNode_SetSigningStopsSigningForThatNodeOnly(t *testing.T) {
	fleet, secure := startVerifyingFleet(t)
	c := newCaller(t, "edge-eu-sign2.mcollective", 2*time.Second)
	// Short reply windows: the unsigned node's five attempts each wait one out.
	conn := c.dial(t, rpc.ConnOptions{Timeout: 500 * time.Millisecond, DuplicateGrace: time.Millisecond})
	signed := c.node(conn, secure, nil)
	if _, err := signed.Inventory(context.Background()); err != nil {
		t.Fatalf("signed inventory: %v", err)
	}
	unsigned := c.node(conn, secure, nil)
	unsigned.SetSigning(false)
	before := fleet.Stats().Invalid
	if _, err := unsigned.Inventory(context.Background()); err == nil {
		t.Fatal("the verifying node answered a node marked not to sign")
	}
	testkit.WaitFor(t, 10*time.Second, "every try's refusal to be counted", func() bool { return fleet.Stats().Invalid >= before+rpc.TriesInventory })
	if _, err := signed.Inventory(context.Background()); err != nil {
		t.Fatalf("the other node stopped signing: %v", err)
	}
}

// TestNode_TryUnsignedSignsAfterAnUnansweredTry: a guess that a node does not verify costs one
// dropped try, then the node is asked again signed and answers.
func TestNode_TryUnsignedSignsAfterAnUnansweredTry(t *testing.T) {
	fleet, secure := startVerifyingFleet(t)
	c := newCaller(t, "edge-eu-sign3.mcollective", 2*time.Second)
	conn := c.dial(t, rpc.ConnOptions{Timeout: 500 * time.Millisecond, DuplicateGrace: time.Millisecond})
	n := c.node(conn, secure, nil)
	n.TryUnsigned()
	before := fleet.Stats().Invalid
	if _, err := n.Inventory(context.Background()); err != nil {
		t.Fatalf("inventory after a dropped unsigned try: %v", err)
	}
	if got := fleet.Stats().Invalid - before; got != 1 {
		t.Fatalf("the verifying node dropped %d requests, want exactly the first unsigned one", got)
	}
}
