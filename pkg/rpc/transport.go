// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"encoding/json"
	"time"

	rpcclient "github.com/choria-io/go-choria/providers/agent/mcorpc/client"
)

// Request is one RPC to one node.
type Request struct {
	Agent    string
	Action   string
	Identity string
	// Data is the JSON-encoded action input.
	Data json.RawMessage
	// Timeout bounds how long replies are awaited; zero uses the transport's default.
	Timeout time.Duration
	// Unsigned tells the transport the node does not verify request signatures (its
	// provisioning JWT has chs false), so under SignAuto the request is not signed.
	Unsigned bool
	// Pause, when set, fences the request where it is published: asked again immediately
	// before, and, as a DeadlineSource, the bound of its TTL (see Conn). Node sets its own.
	Pause PauseSource
	// Watch, when set, counts the request's replies, those after its reply window too, until it
	// is closed (Conn; PerCall sees only those within its window). Node sets it on the
	// credential-making actions.
	Watch *Responders
}

// Label is the request's agent#action, the rpc label of the wrapper's metrics.
func (r Request) Label() string { return r.Agent + "#" + r.Action }

// Reply is one node's answer, decoded as far as the mcorpc envelope.
type Reply struct {
	Sender  string
	Code    int
	Message string
	Data    json.RawMessage
}

// replyFrom keeps what validation and decoding need of go-choria's parsed reply.
func replyFrom(r *rpcclient.RPCReply) Reply {
	return Reply{Sender: r.Sender, Code: int(r.Statuscode), Message: r.Statusmsg, Data: r.Data}
}

// OK is true when the node reported success.
func (r Reply) OK() bool { return r.Code == 0 }

// Transport sends one request and returns every reply received before its timeout.
type Transport interface {
	Request(ctx context.Context, req Request) ([]Reply, error)
}
