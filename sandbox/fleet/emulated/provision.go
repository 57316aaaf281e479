// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"time"

	"github.com/choria-io/go-choria/lifecycle"
)

// lockedError is the real agent's message when another caller holds the provisioning lock.
const lockedError = "Could not obtain provisioning lock"

// Request and reply shapes of go-choria's choria_provision agent (field names are the wire contract).
type (
	tokenRequest struct {
		Token string `json:"token"`
	}
	ed25519Request struct {
		Token string `json:"token"`
		Nonce string `json:"nonce"`
	}
	csrRequest struct {
		Token string `json:"token"`
		CN    string `json:"cn"`
		C     string `json:"C"`
		L     string `json:"L"`
		O     string `json:"O"`
		OU    string `json:"OU"`
		ST    string `json:"ST"`
	}
	configureRequest struct {
		Token          string            `json:"token"`
		Configuration  string            `json:"config"`
		Key            string            `json:"key"`
		Certificate    string            `json:"certificate"`
		CA             string            `json:"ca"`
		SSLDir         string            `json:"ssldir"`
		ECDHPublic     string            `json:"ecdh_public"`
		ServerJWT      string            `json:"server_jwt"`
		ActionPolicies map[string]string `json:"action_policies"`
		OPAPolicies    map[string]string `json:"opa_policies"`
	}
	restartRequest struct {
		Token string `json:"token"`
		Splay int    `json:"splay"`
	}
	releaseUpdateRequest struct {
		Token      string `json:"token"`
		Repository string `json:"repository"`
		Version    string `json:"version"`
	}
	messageReply struct {
		Message string `json:"message"`
	}
	jwtReply struct {
		JWT        string `json:"jwt"`
		ECDHPublic string `json:"ecdh_public"`
	}
	ed25519Reply struct {
		PublicKey string `json:"public_key"`
		Directory string `json:"directory"`
		Signature string `json:"signature"`
	}
	csrReply struct {
		CSR       string `json:"csr"`
		PublicKey string `json:"public_key"`
		SSLDir    string `json:"ssldir"`
	}
)

// pendingExit is recorded for a choria_provision request that arrives after a restart,
// release_update or shutdown was accepted and before the node is gone.
const pendingExit = "not answered: restart or shutdown pending (the real agent holds its mutex until the process is replaced)"

// provisionAction runs one choria_provision action on a node whose mutex the caller holds. It
// returns false when the real agent would never answer: once it accepted a restart,
// release_update or shutdown, its restart/exit goroutine holds the agent's mutex through the
// splay until the process is replaced, so every later action waits on that mutex and its
// request is lost. Only the lock check runs outside that mutex: a caller without the lock is
// still refused at once, and a lock holder's request still takes or extends the lock.
func (n *node) provisionAction(req *request, rep *rpcReply, now time.Time) bool {
	switch req.Action {
	case "configure", "gen25519", "gencsr", "jwt", "release_update":
		// The real agent wraps exactly these in its lock middleware, before anything else.
		if !n.lockFor(req.Sender, req.Caller, now) {
			rep.abort(lockedError)
			return true
		}
	}
	if n.restarting {
		return false
	}
	switch req.Action {
	case "configure":
		n.configure(req, rep)
	case "gen25519":
		n.gen25519(req, rep)
	case "gencsr":
		n.gencsr(req, rep)
	case "jwt":
		n.jwt(req, rep)
	case "release_update":
		n.releaseUpdate(req, rep)
	case "reprovision":
		// Only a node that is not in provisioning mode may be sent back; these always are.
		rep.abort("Server is already in provisioning mode, cannot enable provisioning mode again")
	case "restart":
		n.restart(req, rep)
	case "shutdown":
		n.shutdown(req, rep)
	default:
		rep.Statuscode = statusUnknownAction
		rep.Statusmsg = fmt.Sprintf("Unknown action %s for agent %s", req.Action, req.Agent)
	}
	return true
}

// checkToken is the real agent's token check: no configured token accepts anything.
func (n *node) checkToken(token string, rep *rpcReply) bool {
	want := n.fleet.cfg.Token
	if want == "" || token == want {
		return true
	}
	rep.abort("Incorrect provision token supplied")
	return false
}

func (n *node) jwt(req *request, rep *rpcReply) {
	var args tokenRequest
	if !rep.parseData(req, &args) || !n.checkToken(args.Token, rep) {
		return
	}
	if n.fleet.cfg.JWT == "" {
		rep.abort("No Provisioning JWT file has been configured")
		return
	}
	priv, pub, err := ecdhKeyPair()
	if err != nil {
		rep.abort(fmt.Sprintf("Could not calculate EDCH keys: %s", err))
		return
	}
	n.ecdhPrivate = priv
	rep.Data = jwtReply{JWT: n.fleet.cfg.JWT, ECDHPublic: hex.EncodeToString(pub)}
}

func (n *node) gen25519(req *request, rep *rpcReply) {
	var args ed25519Request
	if !rep.parseData(req, &args) || !n.checkToken(args.Token, rep) {
		return
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		rep.abort(fmt.Sprintf("Could not create keypair: %s", err))
		return
	}
	rep.Data = ed25519Reply{
		PublicKey: hex.EncodeToString(pub),
		Signature: hex.EncodeToString(ed25519.Sign(priv, []byte(args.Nonce))),
		Directory: "/etc/choria",
	}
}

func (n *node) gencsr(req *request, rep *rpcReply) {
	var args csrRequest
	if !rep.parseData(req, &args) || !n.checkToken(args.Token, rep) {
		return
	}
	if args.CN == "" {
		args.CN = n.identity
	}
	csr, pub, err := n.csr(args)
	if err != nil {
		rep.abort(fmt.Sprintf("Could not create CSR: %s", err))
		return
	}
	rep.Data = csrReply{CSR: csr, PublicKey: pub, SSLDir: "/etc/choria/ssl"}
}

func (n *node) configure(req *request, rep *rpcReply) {
	var args configureRequest
	if !rep.parseData(req, &args) || !n.checkToken(args.Token, rep) {
		return
	}
	if len(args.Configuration) == 0 {
		rep.abort("Did not receive any configuration to write, cannot write a empty configuration file")
		return
	}
	if len(args.Key) != 0 && len(args.ECDHPublic) == 0 {
		rep.abort("EDCH Public Key not supplied while providing a private key")
		return
	}
	settings := map[string]string{}
	if err := json.Unmarshal([]byte(args.Configuration), &settings); err != nil {
		rep.abort(fmt.Sprintf("Could not decode configuration data: %s", err))
		return
	}
	if args.Certificate != "" && args.SSLDir != "" && args.CA != "" && args.Key != "" {
		if err := decryptPrivateKey(args.Key, args.ECDHPublic, n.ecdhPrivate); err != nil {
			rep.abort(fmt.Sprintf("TLS Setup Failed: could not decrypt private key: %s", err))
			return
		}
	}
	if v, ok := settings["plugin.choria.server.provision"]; ok {
		if _, err := strToBool(v); err != nil {
			rep.abort(fmt.Sprintf("Could not write config: generated configuration could not be parsed: %s", err))
			return
		}
	}
	if err := checkPolicyNames(args.ActionPolicies, ".policy"); err != nil {
		rep.abort(fmt.Sprintf("Could not save Action Policies: %s", err))
		return
	}
	if err := checkPolicyNames(args.OPAPolicies, ".rego"); err != nil {
		rep.abort(fmt.Sprintf("Could not save Open Policy Agent Policies: %s", err))
		return
	}
	n.config = settings
	n.fleet.configured.Add(1)
	n.fleet.publishEvent(n, lifecycle.Provisioned, n.version)
	rep.Data = messageReply{fmt.Sprintf("Wrote %d lines to %s", len(settings)+1, configFile)}
}

func checkPolicyNames(policies map[string]string, ext string) error {
	for k := range policies {
		if !strings.HasSuffix(k, ext) {
			return fmt.Errorf("expected %q to have %s extension", k, ext)
		}
	}
	return nil
}

func (n *node) restart(req *request, rep *rpcReply) {
	var args restartRequest
	if !rep.parseData(req, &args) || !n.checkToken(args.Token, rep) {
		return
	}
	if provisionEnabled(n.config) {
		rep.abort(fmt.Sprintf("Configuration %s enables provisioning, restart cannot continue", configFile))
		return
	}
	if args.Splay <= 0 {
		args.Splay = 10
	}
	splay := time.Duration(mrand.N(args.Splay)+2) * time.Second
	n.restartLocked(n.fleet.scale(splay), "")
	rep.Data = messageReply{fmt.Sprintf("Restarting Choria Server after %v", splay)}
}

func (n *node) shutdown(req *request, rep *rpcReply) {
	var args tokenRequest
	if !rep.parseData(req, &args) || !n.checkToken(args.Token, rep) {
		return
	}
	splay := time.Duration(mrand.IntN(10)) * time.Second
	// like a restart, the exit goroutine holds the agent's mutex until the process ends
	n.restarting = true
	epoch := n.epoch
	n.fleet.after(n.fleet.scale(splay), func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		// a process exits whether or not it is connected (a disconnect fault)
		if n.epoch == epoch && (n.mode == modeProvisioning || n.mode == modeAway) {
			n.fleet.publishEvent(n, lifecycle.Shutdown, n.version)
			n.mode = modeShutdown
			n.epoch++
		}
	})
	rep.Data = messageReply{fmt.Sprintf("Shutting Choria Server down after %v", splay)}
}

func (n *node) releaseUpdate(req *request, rep *rpcReply) {
	if !n.upgradable {
		rep.abort("Version updates is not enabled in the configuration")
		return
	}
	var args releaseUpdateRequest
	if !rep.parseData(req, &args) || !n.checkToken(args.Token, rep) {
		return
	}
	if err := n.fleet.checkRelease(args.Repository, args.Version); err != nil {
		rep.abort(fmt.Sprintf("Update to version %s failed, release rolled back: %s", args.Version, err))
		return
	}
	n.fleet.publishEvent(n, lifecycle.Upgraded, args.Version)
	n.restartLocked(n.fleet.scale(2*time.Second), args.Version)
	rep.Data = messageReply{"Restarting Choria Server after 2s"}
}
