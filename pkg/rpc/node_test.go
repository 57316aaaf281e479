// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestVerifyNonce_AcceptsOnlyASignatureOfTheNonceByTheReturnedKey(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	const nonce = "6f1c0d1e2a3b4c5d"
	sig := hex.EncodeToString(ed25519.Sign(priv, []byte(nonce)))
	good := ED25519Key{PublicKey: hex.EncodeToString(pub), Signature: sig}
	if err := verifyNonce(good, nonce); err != nil {
		t.Fatalf("a correct signature was refused: %v", err)
	}

	for _, c := range []struct {
		name  string
		key   ED25519Key
		nonce string
		want  string
	}{
		{"another nonce", good, nonce + "x", "invalid nonce signature"},
		{"another key", ED25519Key{PublicKey: hex.EncodeToString(otherPub), Signature: sig}, nonce, "invalid nonce signature"},
		{"no key", ED25519Key{Signature: sig}, nonce, "no public key received"},
		{"no signature", ED25519Key{PublicKey: good.PublicKey}, nonce, "no signature received"},
		{"key not hex", ED25519Key{PublicKey: "zz", Signature: sig}, nonce, "invalid public key received"},
		// ed25519.Verify panics on a key of the wrong length; it must be refused before that.
		{"short key", ED25519Key{PublicKey: good.PublicKey[:10], Signature: sig}, nonce, "invalid public key received"},
		{"signature not hex", ED25519Key{PublicKey: good.PublicKey, Signature: "zz"}, nonce, "invalid signature received"},
		{"short signature", ED25519Key{PublicKey: good.PublicKey, Signature: sig[:20]}, nonce, "invalid nonce signature"},
	} {
		err := verifyNonce(c.key, c.nonce)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestNode_Gen25519NeverSendsAnEmptyNonce(t *testing.T) {
	w, reg := newTestWrapper(t)
	tr := &scripted{answer: func(int, Request) ([]Reply, error) { return nil, errors.New("sent") }}
	n := NewNode(w, tr, "n1.example.net", "token", never)
	n.SetNonceSource(func() (string, error) { return "", nil })
	if _, err := n.Gen25519(context.Background()); err == nil || !strings.Contains(err.Error(), "empty nonce") {
		t.Fatalf("got %v, want the empty nonce refused", err)
	}
	if len(tr.requests) != 0 {
		t.Fatalf("%d requests were sent", len(tr.requests))
	}
	if got := reg.RPCAttempts("eu", "choria_provision#gen25519"); got != TriesGen25519 {
		t.Fatalf("%d attempts were timed, want %d", got, TriesGen25519)
	}
}
