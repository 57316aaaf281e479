// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"fmt"
	"time"

	"github.com/choria-io/go-choria/client/choria_provisionclient"
	"github.com/choria-io/go-choria/client/rpcutilclient"
	"github.com/choria-io/go-choria/inter"
	"github.com/choria-io/go-choria/protocol"
	rpcclient "github.com/choria-io/go-choria/providers/agent/mcorpc/client"
	"github.com/choria-io/go-choria/providers/agent/mcorpc/ddl/agent"
)

// PerCall is the Transport choria-provisioner uses: go-choria's RPC client built for every
// call and narrowed to one worker and one target, with its own broker connections each time.
// It stays as the reference the benchmarks measure Conn against; it does not fence requests
// (Request.Pause): go-choria's client dates them itself and buffers them while disconnected.
type PerCall struct {
	fw      inter.Framework
	ddls    map[string]*agent.DDL
	timeout time.Duration
}

// NewPerCall loads the embedded DDLs of the rpcutil and choria_provision agents once.
func NewPerCall(fw inter.Framework, timeout time.Duration) (*PerCall, error) {
	util, err := rpcutilclient.DDL()
	if err != nil {
		return nil, fmt.Errorf("rpcutil DDL: %w", err)
	}
	prov, err := choria_provisionclient.DDL()
	if err != nil {
		return nil, fmt.Errorf("choria_provision DDL: %w", err)
	}
	return &PerCall{fw: fw, ddls: map[string]*agent.DDL{agentRPCUtil: util, agentProvision: prov}, timeout: timeout}, nil
}

// Request implements Transport.
func (p *PerCall) Request(ctx context.Context, req Request) ([]Reply, error) {
	ddl, ok := p.ddls[req.Agent]
	if !ok {
		return nil, fmt.Errorf("%s: no DDL for agent %q", req.Label(), req.Agent)
	}
	client, err := rpcclient.New(p.fw, req.Agent, rpcclient.DDL(ddl))
	if err != nil {
		return nil, fmt.Errorf("%s: new client: %w", req.Label(), err)
	}

	var replies []Reply
	opts := []rpcclient.RequestOption{
		rpcclient.Targets([]string{req.Identity}),
		rpcclient.Workers(1),
		rpcclient.ReplyHandler(func(_ protocol.Reply, r *rpcclient.RPCReply) {
			replies = append(replies, replyFrom(r))
		}),
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = p.timeout
	}
	if timeout > 0 {
		opts = append(opts, rpcclient.Timeout(timeout))
	}

	if _, err := client.Do(ctx, req.Action, req.Data, opts...); err != nil {
		return nil, fmt.Errorf("%s to %s: %w", req.Label(), req.Identity, err)
	}
	return replies, nil
}
