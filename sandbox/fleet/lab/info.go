// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"encoding/json"
	"fmt"
	"os"
)

// Names of the lab's shared files inside DIR.
const (
	ActionsFileName = "actions.jsonl"
	InfoFileName    = "lab.json"
)

// Info is DIR/lab.json: everything a Choria client, choria-provisioner or a Muster edge needs
// to use the lab (sandbox/stack/edgefile turns a region of it into an edge configuration file).
type Info struct {
	Dir string `json:"dir"`
	// Actions is the shared action log, DIR/actions.jsonl.
	Actions string `json:"actions"`
	// UpdatesRepository is the go-updater repository URL for release_update.
	UpdatesRepository string `json:"updates_repository"`
	// UpgradeVersion is the version the repository holds.
	UpgradeVersion string `json:"upgrade_version"`
	// BaseVersion is what nodes report before any upgrade (unless Versions said otherwise).
	BaseVersion string                `json:"base_version"`
	Regions     map[string]RegionInfo `json:"regions"`
}

// RegionInfo describes one region of the lab.
type RegionInfo struct {
	BrokerURL string `json:"broker_url"`
	// ClientConfig is a Choria client configuration (for the first client identity) that any
	// Choria client can use unchanged; choria-provisioner also takes the password below as
	// broker_provisioning_password.
	ClientConfig string `json:"client_config"`
	CA           string `json:"ca"`
	// CAKey signs further certificates (say, for an edge's own identity); the CA is throwaway.
	CAKey string `json:"ca_key"`
	// Clients are distinct client identities, one per edge, each with its own config.
	Clients              []ClientInfo `json:"clients"`
	ProvisioningToken    string       `json:"provisioning_token"`
	ProvisioningUser     string       `json:"provisioning_user"`
	ProvisioningPassword string       `json:"provisioning_password"`
	// JWTSignerPublicKey is the hex ed25519 key that signs provisioning.jwt.
	JWTSignerPublicKey     string `json:"jwt_signer_public_key"`
	JWTSignerPublicKeyFile string `json:"jwt_signer_public_key_file"`
	// ProvisioningJWT is the file nodes of this region boot with.
	ProvisioningJWT string `json:"provisioning_jwt"`
	// Streams says the broker runs Choria Streams: go-choria's leader election works, in bucket
	// ElectionBucket (choria-provisioner's leader_election and a Muster edge's campaign for its
	// key provisioner, which the provisioning user reaches under the choria.streams API prefix).
	Streams        bool   `json:"streams"`
	ElectionBucket string `json:"election_bucket,omitempty"`
	// ElectionTTL is how long a leader's key outlives its last campaign.
	ElectionTTL    string       `json:"election_ttl,omitempty"`
	RealNodes      []NodeInfo   `json:"real_nodes"`
	EmulatedPrefix string       `json:"emulated_prefix"`
	EmulatedCount  int          `json:"emulated_count"`
	FailedNodes    []FailedNode `json:"failed_nodes"`
}

// ClientInfo is one client identity's certificate, key and ready configuration file.
type ClientInfo struct {
	Identity    string `json:"identity"`
	Certificate string `json:"certificate"`
	Key         string `json:"key"`
	Config      string `json:"config"`
}

// NodeInfo is a real node that started.
type NodeInfo struct {
	Identity string `json:"identity"`
	Dir      string `json:"dir"`
	PID      int    `json:"pid"`
	Version  string `json:"version"`
}

// FailedNode is a node that could not start, and why.
type FailedNode struct {
	Identity string `json:"identity"`
	Error    string `json:"error"`
}

// ReadInfo reads a lab.json.
func ReadInfo(path string) (Info, error) {
	var i Info
	b, err := os.ReadFile(path)
	if err != nil {
		return i, fmt.Errorf("read lab info: %w", err)
	}
	if err := json.Unmarshal(b, &i); err != nil {
		return i, fmt.Errorf("parse lab info %s: %w", path, err)
	}
	return i, nil
}
