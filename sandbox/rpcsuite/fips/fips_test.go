// SPDX-License-Identifier: Apache-2.0

//go:debug fips140=on

// Package fips runs pkg/rpc in FIPS 140 mode against a lab broker and one emulated node. It is
// its own test binary because FIPS mode is chosen for a whole process.
package fips

import (
	"context"
	"crypto/fips140"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/tidwall/gjson"

	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// TestConn_FIPSModeRepliesOnTheSHA256Subject: in FIPS mode go-choria's broker grants a client
// only the reply subjects named by the sha256 of its caller id, so Conn must ask for replies
// there (with md5 the broker refuses the subscription and every call times out).
func TestConn_FIPSModeRepliesOnTheSHA256Subject(t *testing.T) {
	if !fips140.Enabled() {
		t.Fatal("the test binary is not in FIPS 140 mode")
	}
	ctx := context.Background()
	dir := t.TempDir()
	l, err := lab.Start(ctx, lab.Options{Dir: filepath.Join(dir, "lab"), Regions: []string{"eu"}, Emulated: 1})
	if err != nil {
		t.Fatalf("start lab: %v", err)
	}
	t.Cleanup(func() { l.Stop() })
	r := l.Region("eu")
	node := r.EmulatedNodes()[0]

	fw, err := r.Framework("edge-fips.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	// A second client sees the request on the node's subject, reply-to header included.
	spy, err := r.Framework("spy-fips.mcollective")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := spy.NewConnector(ctx, spy.MiddlewareServers, "spy", spy.Logger("spy"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sc.Close)
	seen := make(chan string, 4)
	sub, err := sc.Nats().Subscribe("provisioning.node."+node, func(m *nats.Msg) {
		seen <- gjson.GetBytes(m.Data, `headers.reply-to`).Str
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := sc.Nats().Flush(); err != nil {
		t.Fatal(err)
	}

	conn, err := rpc.Dial(ctx, fw, rpc.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	replies, err := conn.Request(ctx, rpc.Request{Agent: "rpcutil", Action: "inventory", Identity: node, Data: json.RawMessage(`{}`)})
	if err != nil || len(replies) != 1 || !replies[0].OK() {
		t.Fatalf("inventory: %+v, %v", replies, err)
	}

	sum := sha256.Sum256([]byte(fw.CallerID()))
	want := "provisioning.reply." + hex.EncodeToString(sum[:]) + "."
	if got := <-seen; !strings.HasPrefix(got, want) {
		t.Fatalf("reply-to %q, want it under %s", got, want)
	}
}
