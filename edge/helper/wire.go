// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"log/slog"

	"github.com/choria-io/tokens"
	"github.com/seed96588659/muster/pkg/rpc"
)

// Request is what the helper reads: choria-provisioner's host JSON, field for field.
type Request struct {
	// Identity is the node's identity.
	Identity string `json:"identity"`
	// CSR is the node's choria_provision#gencsr reply; null unless the PKI feature is on.
	CSR *rpc.CSR `json:"csr"`
	// ED25519PubKey is the node's choria_provision#gen25519 reply; null unless the ED25519 feature is on.
	ED25519PubKey *rpc.ED25519Key `json:"ed25519_pubkey"`
	// Inventory is the node's raw rpcutil#inventory reply, as a JSON string (choria-provisioner's Metadata).
	Inventory string `json:"inventory"`
	// JWT is the node's validated provisioning JWT claims; null unless the JWT feature is on.
	JWT *tokens.ProvisioningClaims `json:"jwt"`
}

// LogValue keeps the JWT claims, which embed the provisioning token, out of log lines.
func (r *Request) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("identity", r.Identity),
		slog.Bool("csr", r.CSR != nil),
		slog.Bool("ed25519_pubkey", r.ED25519PubKey != nil),
		slog.Bool("jwt", r.JWT != nil),
	)
}

// Response is the helper's answer: choria-provisioner's ConfigResponse, key for key.
type Response struct {
	// Defer postpones the node to a later cycle, with Msg as the reason.
	Defer bool `json:"defer"`
	// Shutdown asks the node to shut down instead of being configured.
	Shutdown bool `json:"shutdown"`
	// Msg explains a defer or shutdown.
	Msg string `json:"msg"`
	// Key is a PEM private key for the node, encrypted by the edge before it is sent.
	Key string `json:"key"`
	// Certificate is the node's signed PEM certificate.
	Certificate string `json:"certificate"`
	// CA is the PEM CA chain the node should trust.
	CA string `json:"ca"`
	// SSLDir is where the node writes Certificate, CA and Key.
	SSLDir string `json:"ssldir"`
	// ServerClaims are signed by the edge into the node's server JWT.
	ServerClaims *tokens.ServerClaims `json:"server_claims"`
	// Configuration is the node's new server configuration, key by key.
	Configuration map[string]string `json:"configuration"`
	// ActionPolicies are aaasvc action policy files by name (*.policy).
	ActionPolicies map[string]string `json:"action_policies"`
	// OPAPolicies are Open Policy Agent policy files by name (*.rego).
	OPAPolicies map[string]string `json:"opa_policies"`
	// Upgrade is the version the node must run before it is configured; empty for none.
	Upgrade string `json:"upgrade"`
}

// LogValue keeps the private key, certificate and claims out of log lines.
func (r *Response) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("defer", r.Defer),
		slog.Bool("shutdown", r.Shutdown),
		slog.String("msg", r.Msg),
		slog.Bool("key", r.Key != ""),
		slog.Bool("certificate", r.Certificate != ""),
		slog.Int("configuration", len(r.Configuration)),
		slog.String("upgrade", r.Upgrade),
	)
}
