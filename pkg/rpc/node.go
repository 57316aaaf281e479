// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
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

// NonceFunc returns a fresh nonce for one gen25519 attempt.
type NonceFunc func() (string, error)

// Node performs the typed actions against one provisioning-mode server.
type Node struct {
	identity  string
	token     string
	wrapper   *Wrapper
	transport Transport
	pause     PauseSource
	nonce     NonceFunc
	unsigned  atomic.Bool
	// tentative: unsigned only until a try goes unanswered (TryUnsigned).
	tentative atomic.Bool
	present   func(ctx context.Context, identity string) (bool, error)
	watch     *Responders
}

// SetResponders makes the node's credential-making actions (CredentialAction) counted by w,
// their late replies included: a second reply to one of them ends that call, and configure,
// with a DuplicateResponderError.
func (n *Node) SetResponders(w *Responders) { n.watch = w }

// SetPresence gives the node a check of whether it still answers in provisioning mode (a
// targeted discovery). Before retrying a restart, release_update or shutdown whose last try got
// no reply, the node asks it: a node that is gone acted on the call (its agent answers nothing
// more once it has), so the call ends with ErrLeft instead of two more reply windows.
func (n *Node) SetPresence(present func(ctx context.Context, identity string) (bool, error)) {
	n.present = present
}

// NewNode binds identity, the provisioning token and the pause source of its host flow.
func NewNode(w *Wrapper, t Transport, identity, token string, pause PauseSource) *Node {
	return &Node{identity: identity, token: token, wrapper: w, transport: t, pause: pause, nonce: RandomNonce}
}

// SetSigning says whether this node's requests need signing: false once its provisioning JWT
// showed chs false (it does not verify signatures), true again otherwise. It marks requests
// Unsigned, which Conn honours under SignAuto; a new Node signs.
func (n *Node) SetSigning(sign bool) {
	n.tentative.Store(false)
	n.unsigned.Store(!sign)
}

// TryUnsigned sends this node's requests unsigned until one try gets no reply, then signs
// every later try. A node that verifies signatures (chs true) drops an unsigned request without
// acting on it, so a wrong guess costs one reply window, never a wrongly accepted request; the
// edge guesses so when the site's recent nodes did not verify.
func (n *Node) TryUnsigned() {
	n.unsigned.Store(true)
	n.tentative.Store(true)
}

// SetNonceSource replaces RandomNonce as the source of gen25519 nonces.
func (n *Node) SetNonceSource(f NonceFunc) { n.nonce = f }

// RandomNonce is 16 random bytes in hex: 32 characters, as long as the request id
// choria-provisioner uses as its nonce, within the DDL's 64.
func RandomNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
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
	return n.sendEach(ctx, agent, action, what, tries, func() (json.RawMessage, error) { return data, nil }, handle)
}

// sendEach is send with the input built inside every attempt, so a refusal of it is a counted
// attempt and each try may carry new input.
func (n *Node) sendEach(ctx context.Context, agent, action, what string, tries int, input func() (json.RawMessage, error), handle func(Reply) error) error {
	req := Request{Agent: agent, Action: action, Identity: n.identity, Pause: n.pause}
	if n.watch != nil && agent == agentProvision && CredentialAction(action) {
		req.Watch = n.watch
	}
	leaves := agent == agentProvision && LeavesProvisioning(action)
	unanswered := false // a try was sent and no try since got a reply
	err := n.wrapper.run(ctx, n.identity, n.pause, req.Label(), tries, func(ctx context.Context) error {
		if unanswered && n.present != nil && leaves {
			// A failed check says nothing: try again as before.
			if here, err := n.present(ctx, n.identity); err == nil && !here {
				return stop(fmt.Errorf("could not %s: no reply, and %s no longer answers in provisioning mode: %w", what, n.identity, ErrLeft))
			}
			// The check takes a discovery's time: a pause or lease deadline that came meanwhile
			// stops this try as the wrapper's check before it would have.
			if n.pause.Paused() {
				return stop(pausedError{req.Label()})
			}
		}
		req := req
		req.Unsigned = n.unsigned.Load()
		data, err := input()
		if err != nil {
			return err
		}
		req.Data = data
		replies, err := n.transport.Request(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				// Stopped in its reply window: it may have been sent and acted on.
				unanswered = true
			}
			return err
		}
		unanswered = len(replies) == 0
		if len(replies) == 0 && req.Unsigned && n.tentative.CompareAndSwap(true, false) {
			n.unsigned.Store(false)
		}
		if req.Watch != nil && len(replies) > 0 {
			if len(replies) > 1 {
				// A retry would hand the rogue another go at the race.
				return stop(&DuplicateResponderError{Action: action, Identity: n.identity})
			}
			req.Watch.replied()
		}
		if len(replies) != 1 {
			return &ResponseCountError{What: what, Count: len(replies), Identity: n.identity}
		}
		if replies[0].Sender != n.identity {
			// Only a server subscribed to this node's subject under another identity can send
			// it; its answer is not the node's (choria-provisioner would take it).
			return fmt.Errorf("could not %s: the reply came from %s while expecting a response from %s", what, replies[0].Sender, n.identity)
		}
		return handle(replies[0])
	})
	if err != nil && leaves && unanswered && !errors.Is(err, ErrLeft) {
		return fmt.Errorf("%w: %w", err, ErrUnanswered)
	}
	return err
}

// LeavesProvisioning is true for the choria_provision actions after which a node that accepted
// them stops answering in provisioning mode: restart, release_update and shutdown.
func LeavesProvisioning(action string) bool {
	return action == "restart" || action == "release_update" || action == "shutdown"
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

// Gen25519 asks the node for its ed25519 public key and verifies the node signed the nonce with
// it. Every attempt sends a fresh nonce from the node's NonceFunc, as choria-provisioner does: a
// retry must not let an earlier, perhaps captured, answer pass. An empty nonce is never sent (a
// signature over a known value proves nothing); it fails that attempt.
func (n *Node) Gen25519(ctx context.Context) (*ED25519Key, error) {
	var key ED25519Key
	var nonce string
	input := func() (json.RawMessage, error) {
		var err error
		if nonce, err = n.nonce(); err != nil {
			return nil, fmt.Errorf("gen25519 %s: %w", n.identity, err)
		}
		if nonce == "" {
			return nil, fmt.Errorf("gen25519 %s: empty nonce", n.identity)
		}
		return json.Marshal(gen25519Input{Token: n.token, Nonce: nonce})
	}
	err := n.sendEach(ctx, agentProvision, "gen25519", "retrieve ED25519 public key", TriesGen25519, input, func(r Reply) error {
		if !r.OK() {
			return &InvalidResponseError{Sender: r.Sender, Message: r.Message, Code: r.Code}
		}
		key = ED25519Key{}
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

// Configure sends the node its configuration; Token is filled in from the node binding. An empty
// configuration ("", "{}", "null", only whitespace) is refused inside the wrapper, so it is a
// timed attempt and an rpc error as in choria-provisioner; it ends the call at once, because a
// retry would refuse the same text again.
func (n *Node) Configure(ctx context.Context, cfg Configuration) (string, error) {
	cfg.Token = n.token
	var out messageOutput
	input := func() (json.RawMessage, error) {
		if emptyConfig(cfg.Config) {
			return nil, stop(fmt.Errorf("configure %s: %w", n.identity, ErrEmptyConfiguration))
		}
		if n.watch != nil {
			// The last moment before the configuration, and what the helper signed, leave.
			if action := n.watch.Duplicate(); action != "" {
				return nil, stop(&DuplicateResponderError{Action: action, Identity: n.identity})
			}
		}
		return json.Marshal(cfg)
	}
	err := n.sendEach(ctx, agentProvision, "configure", "configure", TriesConfigure, input, func(r Reply) error {
		if !r.OK() {
			return &InvalidResponseError{Sender: r.Sender, Message: r.Message, Code: r.Code}
		}
		return decode(r, &out)
	})
	return out.Message, err
}

// emptyConfig is true for text that configures nothing: blank, JSON null or an empty object.
func emptyConfig(c string) bool {
	t := bytes.TrimSpace([]byte(c))
	if len(t) == 0 || string(t) == "null" {
		return true
	}
	if t[0] != '{' {
		return false
	}
	var m map[string]json.RawMessage
	return json.Unmarshal(t, &m) == nil && len(m) == 0
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
			w.log.Warn("could not shut down node", "node", n.identity, "sender", r.Sender, "message", r.Message, "code", r.Code)
			return nil
		}
		w.shutdowns.WithLabelValues(w.site).Inc()
		return nil
	})
}
