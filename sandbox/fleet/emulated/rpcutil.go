// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"encoding/json"
	"fmt"
	"time"
)

// knownAgents is what a provisioning-mode server of this sandbox hosts, sorted as go-choria lists them.
var knownAgents = []string{"choria_provision", "discovery", "rpcutil"}

const collective = "provisioning"

// inventoryReply has the fields and order of go-choria's rpcutil InventoryReply.
type inventoryReply struct {
	Agents         []string        `json:"agents"`
	Classes        []string        `json:"classes"`
	Collectives    []string        `json:"collectives"`
	DataPlugins    []string        `json:"data_plugins"`
	Facts          json.RawMessage `json:"facts"`
	Machines       []any           `json:"machines"`
	MainCollective string          `json:"main_collective"`
	Version        string          `json:"version"`
	Upgradable     bool            `json:"upgradable"`
}

// rpcutilAction runs one rpcutil action on a node whose mutex the caller holds.
func (n *node) rpcutilAction(req *request, rep *rpcReply, now time.Time) {
	switch req.Action {
	case "inventory":
		rep.Data = inventoryReply{
			Agents:         knownAgents,
			Classes:        []string{},
			Collectives:    []string{collective},
			DataPlugins:    []string{},
			Facts:          n.facts,
			Machines:       []any{},
			MainCollective: collective,
			Version:        n.version,
			Upgradable:     n.upgradable,
		}
	case "ping":
		rep.Data = map[string]int64{"pong": now.Unix()}
	case "collective_info":
		rep.Data = map[string]any{"main_collective": collective, "collectives": []string{collective}}
	default:
		rep.Statuscode = statusUnknownAction
		rep.Statusmsg = fmt.Sprintf("Unknown action %s for agent %s", req.Action, req.Agent)
	}
}
