// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"fmt"
	"time"

	"github.com/choria-io/go-choria/client/choria_provisionclient"
	"github.com/choria-io/go-choria/client/rpcutilclient"
)

// MinReleaseUpdateTimeout is the least time one release_update attempt waits for its reply: the
// agent downloads and unpacks the new binary before it answers, for up to its own 20 s timeout,
// and a retry sent earlier only waits behind the first on the agent's lock.
const MinReleaseUpdateTimeout = 25 * time.Second

// Timeouts are the reply windows per action, derived as go-choria's RPC client derives them: the
// configured discovery timeout (its measure of network overhead) plus the agent DDL's timeout.
// From go-choria v0.30.0's embedded DDLs with the default 2 s discovery timeout that is 4 s for
// rpcutil and 22 s for choria_provision; release_update gets at least MinReleaseUpdateTimeout.
type Timeouts struct {
	discovery time.Duration
	agents    map[string]time.Duration
}

// NewTimeouts reads the timeouts of the rpcutil and choria_provision DDLs embedded in go-choria.
func NewTimeouts(discovery time.Duration) (Timeouts, error) {
	util, err := rpcutilclient.DDL()
	if err != nil {
		return Timeouts{}, fmt.Errorf("rpcutil DDL: %w", err)
	}
	prov, err := choria_provisionclient.DDL()
	if err != nil {
		return Timeouts{}, fmt.Errorf("choria_provision DDL: %w", err)
	}
	return Timeouts{discovery: discovery, agents: map[string]time.Duration{
		agentRPCUtil:   util.Timeout(),
		agentProvision: prov.Timeout(),
	}}, nil
}

// For is the reply window of agent#action; an agent without a known DDL gets go-choria's
// default agent timeout of 10 s.
func (t Timeouts) For(agent, action string) time.Duration {
	d, ok := t.agents[agent]
	if !ok {
		d = 10 * time.Second
	}
	d += t.discovery
	if agent == agentProvision && action == "release_update" && d < MinReleaseUpdateTimeout {
		d = MinReleaseUpdateTimeout
	}
	return d
}
