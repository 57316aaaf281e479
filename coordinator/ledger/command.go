// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// CommandType is the first byte of every log entry the coordinator writes.
type CommandType uint8

// IgnoreUnknown is OR-ed into the type byte of a command that an older member may skip: during a
// rolling upgrade a member that does not know the type ignores it instead of halting its FSM.
const IgnoreUnknown CommandType = 0x80

// Command types. Values are part of the on-disk log format: never renumber.
const (
	CmdRegister CommandType = 1
	CmdGrant    CommandType = 2
	CmdRenew    CommandType = 3
	CmdReport   CommandType = 4
	CmdExpire   CommandType = 5
	CmdExtend   CommandType = 6
	CmdPause    CommandType = 7
	CmdMember   CommandType = 8
	CmdRetry    CommandType = 9
	CmdProtocol CommandType = 10
	CmdOperator CommandType = 11
	CmdAcquire  CommandType = 12
)

// known reports whether this version of the ledger applies commands of type t (versions.go).
func (t CommandType) known() bool { return commandProtocol(t) > 0 }

// String names the command type for logs and the apply latency metric.
func (t CommandType) String() string {
	switch t &^ IgnoreUnknown {
	case CmdRegister:
		return "register"
	case CmdGrant:
		return "grant"
	case CmdRenew:
		return "renew"
	case CmdReport:
		return "report"
	case CmdExpire:
		return "expire"
	case CmdExtend:
		return "extend"
	case CmdPause:
		return "pause"
	case CmdMember:
		return "member"
	case CmdRetry:
		return "retry"
	case CmdProtocol:
		return "protocol"
	case CmdOperator:
		return "operator"
	case CmdAcquire:
		return "acquire"
	case CmdHold:
		return "hold"
	}
	return fmt.Sprintf("type-%d", uint8(t))
}

// RegisterNode is one node seen by an edge's discovery.
type RegisterNode struct {
	Identity         string          `json:"identity"`
	Region           string          `json:"region"`
	InventoryVersion string          `json:"inventory_version,omitempty"`
	Facts            json.RawMessage `json:"facts,omitempty"`
}

// Register adds nodes (idempotent) and puts finished nodes seen again back to waiting.
type Register struct {
	Now    time.Time      `json:"now"`
	Edge   string         `json:"edge,omitempty"`
	Policy Policy         `json:"policy"`
	Nodes  []RegisterNode `json:"nodes"`
	// Approval is the leader's hold policy (cluster protocol 8; a member of the build before
	// does not decode it, and below 8 no member applies it).
	Approval *Approval `json:"approval,omitempty"`
}

// Grant leases up to Max eligible waiting nodes of Region to Edge. The token is the log index.
// A LeaseID Edge already holds in Region is answered with that lease, so a retried grant is
// idempotent.
type Grant struct {
	Now     time.Time     `json:"now"`
	LeaseID string        `json:"lease_id"`
	Edge    string        `json:"edge"`
	Region  string        `json:"region"`
	Max     int           `json:"max"`
	TTL     time.Duration `json:"ttl"`
	Policy  Policy        `json:"policy"`
}

// Renew moves a lease's expiry to Now+TTL unless it is later already.
type Renew struct {
	Now     time.Time     `json:"now"`
	LeaseID string        `json:"lease_id"`
	Token   uint64        `json:"token"`
	TTL     time.Duration `json:"ttl"`
	// Edge and Region, when set, must be the lease's.
	Edge   string `json:"edge,omitempty"`
	Region string `json:"region,omitempty"`
}

// Result is one node's outcome under a lease.
type Result struct {
	Identity         string      `json:"identity"`
	Outcome          api.Outcome `json:"outcome"`
	Error            string      `json:"error,omitempty"`
	InventoryVersion string      `json:"inventory_version,omitempty"`
	TargetVersion    string      `json:"target_version,omitempty"`
}

// Report applies results under one lease; each is applied only if the node's current lease and
// token are the ones named here.
type Report struct {
	Now     time.Time `json:"now"`
	LeaseID string    `json:"lease_id"`
	Token   uint64    `json:"token"`
	Policy  Policy    `json:"policy"`
	Results []Result  `json:"results"`
	// Edge and Region, when set, must be the lease's.
	Edge   string `json:"edge,omitempty"`
	Region string `json:"region,omitempty"`
	// RequestID, when set, makes the report idempotent: its answer is kept for Keep, and a
	// retry under the same lease and request id gets that answer again and changes nothing.
	RequestID string        `json:"request_id,omitempty"`
	Keep      time.Duration `json:"keep,omitempty"`
}

// Expire ends leases whose ExpiresAt+Grace is not after Now; nodes still held go back to waiting.
type Expire struct {
	Now      time.Time     `json:"now"`
	Grace    time.Duration `json:"grace"`
	Policy   Policy        `json:"policy"`
	LeaseIDs []string      `json:"lease_ids"`
}

// Extend moves every outstanding lease's expiry to the later of max(ExpiresAt, Now)+By and
// Now+AtLeast. A new leader writes it before it expires anything, with AtLeast = a full TTL or
// the longest time a lease had left at the ledger's latest stamp, whichever is longer, plus one
// election timeout: it cannot know when, on the old leader's clock, an edge last renewed.
type Extend struct {
	Now     time.Time     `json:"now"`
	By      time.Duration `json:"by"`
	AtLeast time.Duration `json:"at_least,omitempty"`
}

// Pause sets the replicated operator pause flag.
type Pause struct {
	Now    time.Time `json:"now"`
	Paused bool      `json:"paused"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// Member records (or, with Remove, forgets) the API address of a coordinator member, so any
// member can tell a client where the leader's API is.
type Member struct {
	ID         string `json:"id"`
	APIAddress string `json:"api_address,omitempty"`
	Remove     bool   `json:"remove,omitempty"`
}

// Retry sends the named nodes back to waiting on the operator's word: attempts reset, no backoff.
// A node leased, not in a final state, or (when Region or State is set) no longer in the region
// or state the leader selected it by is refused by name and left as it is.
type Retry struct {
	Now    time.Time     `json:"now"`
	By     string        `json:"by,omitempty"`
	Policy Policy        `json:"policy"`
	Nodes  []string      `json:"nodes"`
	Region string        `json:"region,omitempty"`
	State  api.NodeState `json:"state,omitempty"`
	// RequestID, when set, makes the operator's retry idempotent: the nodes it moved are kept
	// for Keep (RetriedBy), and a node it already moved is answered as moved, not refused.
	RequestID string        `json:"request_id,omitempty"`
	Keep      time.Duration `json:"keep,omitempty"`
}

// SetProtocol raises the cluster protocol to Version (see Protocol); a lower or equal version
// changes nothing. The leader proposes it once every member announces Version.
type SetProtocol struct {
	Version int `json:"version"`
	// ClusterID, from cluster protocol 7 (ClusterIDProtocol), names the cluster: the first one
	// applied is recorded and never changes (cluster.go).
	ClusterID string `json:"cluster_id,omitempty"`
}

func (c Register) stamp() time.Time { return c.Now }
func (c Grant) stamp() time.Time    { return c.Now }
func (c Renew) stamp() time.Time    { return c.Now }
func (c Report) stamp() time.Time   { return c.Now }
func (c Expire) stamp() time.Time   { return c.Now }
func (c Extend) stamp() time.Time   { return c.Now }
func (c Pause) stamp() time.Time    { return c.Now }
func (c Retry) stamp() time.Time    { return c.Now }

// StampOf is the leader time command c carries; zero for commands without one (member, protocol).
func StampOf(c Command) time.Time {
	if s, ok := c.(stamped); ok {
		return s.stamp()
	}
	return time.Time{}
}

// Command is the body of a log entry; its Type is the entry's first byte.
type Command interface {
	Type() CommandType
}

// Type is the command's type byte.
func (Register) Type() CommandType { return CmdRegister }

// Type is the command's type byte.
func (Grant) Type() CommandType { return CmdGrant }

// Type is the command's type byte.
func (Renew) Type() CommandType { return CmdRenew }

// Type is the command's type byte.
func (Report) Type() CommandType { return CmdReport }

// Type is the command's type byte.
func (Expire) Type() CommandType { return CmdExpire }

// Type is the command's type byte.
func (Extend) Type() CommandType { return CmdExtend }

// Type is the command's type byte.
func (Pause) Type() CommandType { return CmdPause }

// Type is the command's type byte.
func (Member) Type() CommandType { return CmdMember }

// Type is the command's type byte.
func (Retry) Type() CommandType { return CmdRetry }

// Type is the command's type byte.
func (SetProtocol) Type() CommandType { return CmdProtocol }

// EncodeCommand returns the log entry for a command: the type byte then the JSON body.
func EncodeCommand(c Command) ([]byte, error) {
	t := c.Type()
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode %s command: %w", t, err)
	}
	out := make([]byte, 0, len(b)+1)
	out = append(out, byte(t))
	return append(out, b...), nil
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadCommand}, args...)...)
}
