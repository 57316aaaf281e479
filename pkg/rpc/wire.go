// SPDX-License-Identifier: Apache-2.0

package rpc

import "encoding/json"

// The request and reply bodies below carry the JSON field names of go-choria's rpcutil and
// choria_provision agents (v0.30.0). They are declared here rather than imported because the
// agent's package is server code with process-wide state and init() side effects.

type tokenInput struct {
	Token string `json:"token"`
}

type gen25519Input struct {
	Token string `json:"token"`
	Nonce string `json:"nonce"`
}

type gencsrInput struct {
	Token string `json:"token"`
	CN    string `json:"cn,omitempty"`
	C     string `json:"C,omitempty"`
	L     string `json:"L,omitempty"`
	O     string `json:"O,omitempty"`
	OU    string `json:"OU,omitempty"`
	ST    string `json:"ST,omitempty"`
}

type restartInput struct {
	Token string `json:"token"`
	Splay int    `json:"splay"`
}

type releaseUpdateInput struct {
	Token      string `json:"token"`
	Repository string `json:"repository"`
	Version    string `json:"version"`
}

// Configuration is the input of choria_provision#configure.
type Configuration struct {
	Token          string            `json:"token"`
	Config         string            `json:"config"`
	Key            string            `json:"key,omitempty"`
	Certificate    string            `json:"certificate,omitempty"`
	CA             string            `json:"ca,omitempty"`
	SSLDir         string            `json:"ssldir,omitempty"`
	ECDHPublic     string            `json:"ecdh_public,omitempty"`
	ServerJWT      string            `json:"server_jwt,omitempty"`
	ActionPolicies map[string]string `json:"action_policies,omitempty"`
	OPAPolicies    map[string]string `json:"opa_policies,omitempty"`
}

// Inventory is the reply of rpcutil#inventory.
type Inventory struct {
	Agents         []string        `json:"agents"`
	Classes        []string        `json:"classes"`
	Collectives    []string        `json:"collectives"`
	DataPlugins    []string        `json:"data_plugins"`
	Facts          json.RawMessage `json:"facts"`
	MainCollective string          `json:"main_collective"`
	Version        string          `json:"version"`
	Upgradable     bool            `json:"upgradable"`
	// Raw is the whole reply body, kept for the helper's inventory field.
	Raw json.RawMessage `json:"-"`
}

// ED25519Key is the reply of choria_provision#gen25519, already verified against the nonce.
type ED25519Key struct {
	PublicKey string `json:"public_key"`
	Directory string `json:"directory"`
	Signature string `json:"signature"`
}

// CSR is the reply of choria_provision#gencsr.
type CSR struct {
	CSR       string `json:"csr"`
	PublicKey string `json:"public_key"`
	SSLDir    string `json:"ssldir"`
}

// JWT is the reply of choria_provision#jwt.
type JWT struct {
	JWT        string `json:"jwt"`
	ECDHPublic string `json:"ecdh_public"`
}

type messageOutput struct {
	Message string `json:"message"`
}
