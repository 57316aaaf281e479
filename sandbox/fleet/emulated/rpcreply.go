// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"encoding/json"
	"fmt"
)

// SimpleRPC status codes, as go-choria's mcorpc numbers them.
const (
	statusOK            = 0
	statusAborted       = 1
	statusUnknownAction = 2
	statusInvalidData   = 4
)

// rpcReply is the SimpleRPC reply body a go-choria agent publishes.
type rpcReply struct {
	Action     string `json:"action"`
	Statuscode int    `json:"statuscode"`
	Statusmsg  string `json:"statusmsg"`
	Data       any    `json:"data"`
}

// newReply starts an OK reply with empty data, as mcorpc does before calling the action.
func newReply(action string) *rpcReply {
	return &rpcReply{Action: action, Statuscode: statusOK, Statusmsg: "OK", Data: json.RawMessage(`{}`)}
}

// abort sets the Aborted status the provision agent uses for every refusal.
func (r *rpcReply) abort(msg string) {
	r.Statuscode = statusAborted
	r.Statusmsg = msg
}

func (r *rpcReply) ok() bool { return r.Statuscode == statusOK }

// parseData decodes the request data as mcorpc.ParseRequestData does, failing with InvalidData.
func (r *rpcReply) parseData(req *request, target any) bool {
	if err := json.Unmarshal(req.Data, target); err != nil {
		r.Statuscode = statusInvalidData
		r.Statusmsg = fmt.Sprintf("Could not parse request data for %s#%s: %s", req.Agent, req.Action, err)
		return false
	}
	return true
}
