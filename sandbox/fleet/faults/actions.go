// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"slices"
	"strings"
)

// knownActions are the agent#action names an emulated node answers; faults may name only these.
var knownActions = []string{
	"discovery#ping",
	"rpcutil#inventory",
	"rpcutil#ping",
	"rpcutil#collective_info",
	"choria_provision#configure",
	"choria_provision#gen25519",
	"choria_provision#gencsr",
	"choria_provision#jwt",
	"choria_provision#release_update",
	"choria_provision#reprovision",
	"choria_provision#restart",
	"choria_provision#shutdown",
}

// KnownActions lists the agent#action names faults may refer to.
func KnownActions() []string { return slices.Clone(knownActions) }

// NormalizeAction turns "configure", "inventory", "discovery" or "agent#action" into the
// canonical agent#action, refusing names an emulated node does not answer.
func NormalizeAction(name string) (string, error) {
	n := strings.TrimSpace(name)
	if n == "" {
		return "", fmt.Errorf("action is empty")
	}
	if !strings.Contains(n, "#") {
		switch n {
		case "discovery", "ping":
			n = "discovery#ping"
		case "inventory", "collective_info":
			n = "rpcutil#" + n
		default:
			n = "choria_provision#" + n
		}
	}
	if !slices.Contains(knownActions, n) {
		return "", fmt.Errorf("unknown action %q (known: %s)", name, strings.Join(knownActions, ", "))
	}
	return n, nil
}
