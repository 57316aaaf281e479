// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Try limits per action: what a repeat costs decides them (an inventory failure was the most
// common cause of failed deployments, so it gets the most tries; a CSR regenerates a key, so one).
const (
	TriesInventory     = 5
	TriesGen25519      = 5
	TriesConfigure     = 5
	TriesJWT           = 3
	TriesRestart       = 3
	TriesShutdown      = 3
	TriesReleaseUpdate = 3
	TriesGencsr        = 1
)

const (
	agentRPCUtil   = "rpcutil"
	agentProvision = "choria_provision"
)

// Node performs the typed actions against one provisioning-mode server.
type Node struct {
	identity  string
	token     string
	wrapper   *Wrapper
	transport Transport
	pause     PauseSource
}

// NewNode binds identity, the provisioning token and the pause source of its host flow.
func NewNode(w *Wrapper, t Transport, identity, token string, pause PauseSource) *Node {
	return &Node{identity: identity, token: token, wrapper: w, transport: t, pause: pause}
}

// Identity is the node's Choria identity.
func (n *Node) Identity() string { return n.identity }

// call runs one action through the wrapper and hands the single OK reply to onOK.
func (n *Node) call(ctx context.Context, agent, action, what string, tries int, input any, onOK func(Reply) error) error {
	return n.send(ctx, agent, action, what, tries, input, func(r Reply) error {
		if !r.OK() {
			return &InvalidResponseError{Sender: r.Sender, Message: r.Message, Code: r.Code}
		}
		return onOK(r)
	})
}

// send runs one action through the wrapper, requires exactly one reply and hands it to handle,
// which decides what its status means; the reply body is only read after the count is known.
func (n *Node) send(ctx context.Context, agent, action, what string, tries int, input any, handle func(Reply) error) error {
	data, err := json.Marshal(input)
	if err != nil {
		return fmt.Errorf("%s#%s: encode input: %w", agent, action, err)
	}
	req := Request{Agent: agent, Action: action, Identity: n.identity, Data: data}

	return n.wrapper.Run(ctx, n.pause, req.Label(), tries, func(ctx context.Context) error {
		replies, err := n.transport.Request(ctx, req)
		if err != nil {
			return err
		}
		if len(replies) != 1 {
			return &ResponseCountError{What: what, Count: len(replies), Identity: n.identity}
		}
		return handle(replies[0])
	})
}

func decode(r Reply, into any) error {
	if err := json.Unmarshal(r.Data, into); err != nil {
		return fmt.Errorf("decode reply from %s: %w", r.Sender, err)
	}
	return nil
}

// Inventory fetches rpcutil#inventory.
func (n *Node) Inventory(ctx context.Context) (*Inventory, error) {
	var inv Inventory
	err := n.call(ctx, agentRPCUtil, "inventory", "retrieve inventory", TriesInventory, struct{}{}, func(r Reply) error {
		if err := decode(r, &inv); err != nil {
			return err
		}
		inv.Raw = r.Data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &inv, nil
}

// Gen25519 asks the node for its ed25519 public key and verifies the node signed nonce with it.
// The nonce must be fresh and not empty: a signature over a known value proves nothing.
func (n *Node) Gen25519(ctx context.Context, nonce string) (*ED25519Key, error) {
	if nonce == "" {
		return nil, fmt.Errorf("gen25519 %s: empty nonce", n.identity)
	}
	var key ED25519Key
	err := n.call(ctx, agentProvision, "gen25519", "retrieve ED25519 public key", TriesGen25519, gen25519Input{Token: n.token, Nonce: nonce}, func(r Reply) error {
		if err := decode(r, &key); err != nil {
			return err
		}
		return verifyNonce(key, nonce)
	})
	if err != nil {
		return nil, err
	}
	return &key, nil
}

func verifyNonce(key ED25519Key, nonce string) error {
	if key.PublicKey == "" {
		return errors.New("no public key received")
	}
	if key.Signature == "" {
		return errors.New("no signature received")
	}
	pk, err := hex.DecodeString(key.PublicKey)
	if err != nil || len(pk) != ed25519.PublicKeySize {
		return fmt.Errorf("invalid public key received: %q", key.PublicKey)
	}
	sig, err := hex.DecodeString(key.Signature)
	if err != nil {
		return fmt.Errorf("invalid signature received: %w", err)
	}
	if !ed25519.Verify(pk, []byte(nonce), sig) {
		return errors.New("invalid nonce signature")
	}
	return nil
}

// Gencsr asks the node to create a key and a CSR for cn.
func (n *Node) Gencsr(ctx context.Context, cn string) (*CSR, error) {
	var csr CSR
	err := n.call(ctx, agentProvision, "gencsr", "fetch CSR", TriesGencsr, gencsrInput{Token: n.token, CN: cn}, func(r Reply) error {
		return decode(r, &csr)
	})
	if err != nil {
		return nil, err
	}
	return &csr, nil
}

// JWT fetches the node's provisioning JWT and its ECDH public key.
func (n *Node) JWT(ctx context.Context) (*JWT, error) {
	var jwt JWT
	err := n.call(ctx, agentProvision, "jwt", "retrieve JWT", TriesJWT, tokenInput{Token: n.token}, func(r Reply) error {
		return decode(r, &jwt)
	})
	if err != nil {
		return nil, err
	}
	return &jwt, nil
}

// Configure sends the node its configuration; Token is filled in from the node binding.
func (n *Node) Configure(ctx context.Context, cfg Configuration) (string, error) {
	if cfg.Config == "" {
		return "", fmt.Errorf("configure %s: empty configuration", n.identity)
	}
	cfg.Token = n.token
	return n.message(ctx, "configure", "configure", TriesConfigure, cfg)
}

// Restart asks the node to restart into its new configuration after up to splay seconds.
func (n *Node) Restart(ctx context.Context, splay int) (string, error) {
	return n.message(ctx, "restart", "perform restart", TriesRestart, restartInput{Token: n.token, Splay: splay})
}

// ReleaseUpdate asks the node to replace itself with version from repository.
func (n *Node) ReleaseUpdate(ctx context.Context, repository, version string) (string, error) {
	return n.message(ctx, "release_update", "perform upgrade", TriesReleaseUpdate, releaseUpdateInput{Token: n.token, Repository: repository, Version: version})
}

func (n *Node) message(ctx context.Context, action, what string, tries int, input any) (string, error) {
	var out messageOutput
	err := n.call(ctx, agentProvision, action, what, tries, input, func(r Reply) error {
		return decode(r, &out)
	})
	return out.Message, err
}

// Shutdown asks the node to shut down. The helper already rejected the node, so a non-OK
// confirmation is only logged and does not fail the call; the shutdown counter counts OK replies.
func (n *Node) Shutdown(ctx context.Context) error {
	w := n.wrapper
	return n.send(ctx, agentProvision, "shutdown", "perform shutdown", TriesShutdown, tokenInput{Token: n.token}, func(r Reply) error {
		if !r.OK() {
			w.log.Warn("could not shut down node", "sender", r.Sender, "message", r.Message, "code", r.Code)
			return nil
		}
		w.shutdowns.WithLabelValues(w.site).Inc()
		return nil
	})
}
