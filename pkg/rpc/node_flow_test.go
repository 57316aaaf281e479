// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// scripted is a Transport whose answer to each request comes from answer; it keeps every request.
type scripted struct {
	requests []Request
	answer   func(try int, req Request) ([]Reply, error)
}

func (s *scripted) Request(_ context.Context, req Request) ([]Reply, error) {
	s.requests = append(s.requests, req)
	return s.answer(len(s.requests), req)
}

func TestNode_Gen25519SendsAFreshNonceOnEveryTry(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := &scripted{answer: func(try int, req Request) ([]Reply, error) {
		if try == 1 {
			return nil, errors.New("no answer")
		}
		var in gen25519Input
		if err := json.Unmarshal(req.Data, &in); err != nil {
			return nil, err
		}
		out, _ := json.Marshal(ED25519Key{PublicKey: hex.EncodeToString(pub), Signature: hex.EncodeToString(ed25519.Sign(priv, []byte(in.Nonce)))})
		return []Reply{{Sender: req.Identity, Data: out}}, nil
	}}
	w, _ := newTestWrapper(t)
	n := NewNode(w, tr, "n1.example.net", "token", never)
	if _, err := n.Gen25519(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(tr.requests) != 2 {
		t.Fatalf("%d requests, want 2", len(tr.requests))
	}
	var nonces []string
	for _, r := range tr.requests {
		var in gen25519Input
		if err := json.Unmarshal(r.Data, &in); err != nil {
			t.Fatal(err)
		}
		if in.Nonce == "" {
			t.Fatalf("request %s carried an empty nonce", r.Data)
		}
		nonces = append(nonces, in.Nonce)
	}
	if nonces[0] == nonces[1] {
		t.Fatalf("both tries sent nonce %q", nonces[0])
	}
}

func TestNode_ConfigureRefusesAnEmptyConfigurationAsACountedAttempt(t *testing.T) {
	for _, cfg := range []string{"", "{}", "null", " \n\t", "{ }", " null "} {
		w, reg := newTestWrapper(t)
		tr := &scripted{answer: func(int, Request) ([]Reply, error) { return nil, errors.New("sent") }}
		n := NewNode(w, tr, "n1.example.net", "token", never)
		_, err := n.Configure(context.Background(), Configuration{Config: cfg})
		if err == nil || !strings.Contains(err.Error(), "empty configuration") {
			t.Errorf("config %q: got %v, want the empty configuration refused", cfg, err)
		}
		if len(tr.requests) != 0 {
			t.Errorf("config %q: %d requests were sent", cfg, len(tr.requests))
		}
		if got := reg.RPCAttempts("eu", "choria_provision#configure"); got == 0 {
			t.Errorf("config %q: no attempt was timed", cfg)
		}
		if got := testutil.ToFloat64(reg.RPCErrors.WithLabelValues("eu", "choria_provision#configure")); got != 1 {
			t.Errorf("config %q: rpc_errors = %v, want 1", cfg, got)
		}
	}
}

// A reply is the node's answer only when the node sent it: one from another identity (a server
// misconfigured onto this node's subject) fails the attempt instead of being taken for it.
func TestNode_ReplyFromAnotherSenderIsNotTheNodesAnswer(t *testing.T) {
	tr := &scripted{answer: func(try int, req Request) ([]Reply, error) {
		return []Reply{{Sender: "impostor.example.net", Data: json.RawMessage(`{"version":"0.30.0"}`)}}, nil
	}}
	w, _ := newTestWrapper(t)
	n := NewNode(w, tr, "n1.example.net", "token", never)
	_, err := n.Inventory(context.Background())
	if err == nil || !strings.Contains(err.Error(), "impostor.example.net") || !strings.Contains(err.Error(), "n1.example.net") {
		t.Fatalf("Inventory with a reply from another sender = %v, want it refused naming both", err)
	}
}

// A restart whose reply was lost (a broker restart between the node's answer and us) is not
// sent again into the agent's held mutex for two more reply windows when the node is already
// gone: with a presence check, the next try asks discovery first and ends with ErrLeft.
func TestNode_UnansweredRestartStopsWhenTheNodeLeft(t *testing.T) {
	for _, tc := range []struct {
		name     string
		present  bool
		requests int
		left     bool
	}{{"node gone", false, 1, true}, {"node still there", true, TriesRestart, false}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &scripted{answer: func(int, Request) ([]Reply, error) { return nil, nil }}
			w, _ := newTestWrapper(t)
			n := NewNode(w, tr, "n1.example.net", "token", never)
			checks := 0
			n.SetPresence(func(ctx context.Context, id string) (bool, error) { checks++; return tc.present, nil })
			_, err := n.Restart(context.Background(), 1)
			if err == nil || errors.Is(err, ErrLeft) != tc.left {
				t.Fatalf("Restart = %v, want ErrLeft %v", err, tc.left)
			}
			if len(tr.requests) != tc.requests || checks != tc.requests-boolInt(!tc.left) {
				t.Fatalf("%d requests and %d presence checks, want %d requests", len(tr.requests), checks, tc.requests)
			}
		})
	}
	// The first call of a flow, and calls that did get a reply, never ask.
	tr := &scripted{answer: func(int, Request) ([]Reply, error) { return nil, nil }}
	w, _ := newTestWrapper(t)
	n := NewNode(w, tr, "n1.example.net", "token", never)
	n.SetPresence(func(ctx context.Context, id string) (bool, error) {
		t.Error("presence asked for inventory")
		return false, nil
	})
	if _, err := n.Inventory(context.Background()); err == nil || errors.Is(err, ErrLeft) {
		t.Fatalf("Inventory = %v", err)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
