// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"context"
	"encoding/json"
	"time"

	"github.com/choria-io/go-choria/inter"
	"github.com/choria-io/go-choria/protocol"
	"github.com/choria-io/go-choria/server/agents"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// recordingAgent wraps a real go-choria agent: the real agent handles every request unchanged,
// and the wrapper records the action, the caller and the reply's status.
type recordingAgent struct {
	agents.Agent
	sink   recorder.Sink
	region string
	node   string
	// incarnation is recorded with every action (recorder.Action.Incarnation).
	incarnation int
	now         func() time.Time
}

// mcorpcRequest and mcorpcReply are the parts of the SimpleRPC payloads the recorder needs.
type mcorpcRequest struct {
	Agent  string `json:"agent"`
	Action string `json:"action"`
}

type mcorpcReply struct {
	Statuscode int    `json:"statuscode"`
	Statusmsg  string `json:"statusmsg"`
}

// HandleMessage lets the real agent handle the request, records the outcome, then hands the
// reply on. The real mcorpc agent publishes its reply before HandleMessage returns.
func (a *recordingAgent) HandleMessage(ctx context.Context, msg inter.Message, req protocol.Request, conn inter.ConnectorInfo, outbox chan *agents.AgentReply) {
	inner := make(chan *agents.AgentReply, 1)
	a.Agent.HandleMessage(ctx, msg, req, conn, inner)

	act := recorder.Action{Region: a.region, Node: a.node, Caller: req.CallerID(), Action: a.Name() + "#" + actionName(a.Name(), msg.Payload()), Incarnation: a.incarnation}
	var reply *agents.AgentReply
	select {
	case reply = <-inner:
	default:
	}
	switch {
	case reply == nil:
		act.Error = "no reply"
	case reply.Error != nil:
		act.Error = reply.Error.Error()
	default:
		act.OK, act.Error = replyStatus(a.Name(), reply.Body)
	}
	act.Time = a.now()
	a.sink.Record(act)
	if reply != nil {
		outbox <- reply
	}
}

func actionName(agent string, payload []byte) string {
	if agent == "discovery" {
		return "ping"
	}
	var r mcorpcRequest
	if err := json.Unmarshal(payload, &r); err != nil || r.Action == "" {
		return "unknown"
	}
	return r.Action
}

func replyStatus(agent string, body []byte) (bool, string) {
	if agent == "discovery" {
		return true, ""
	}
	var r mcorpcReply
	if err := json.Unmarshal(body, &r); err != nil {
		return false, "undecodable reply: " + err.Error()
	}
	if r.Statuscode != 0 {
		return false, r.Statusmsg
	}
	return true, ""
}
