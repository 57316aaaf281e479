// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed96588659/muster/pkg/rpc"
)

// ErrNotRead refuses a request a plan may not send: anything but rpcutil#inventory.
var ErrNotRead = errors.New("a plan sends rpcutil#inventory only")

// readAgent and readAction are the one request a plan sends to a node. rpcutil answers in
// provisioning mode without the provisioning lock and changes nothing on the node.
const (
	readAgent  = "rpcutil"
	readAction = "inventory"
)

// readOnly is a transport that sends rpcutil#inventory and refuses everything else before it
// reaches the broker.
type readOnly struct{ t rpc.Transport }

// Request sends req when it is rpcutil#inventory, else fails with ErrNotRead.
func (r readOnly) Request(ctx context.Context, req rpc.Request) ([]rpc.Reply, error) {
	if req.Agent != readAgent || req.Action != readAction {
		return nil, fmt.Errorf("%s to %s: %w", req.Label(), req.Identity, ErrNotRead)
	}
	return r.t.Request(ctx, req)
}

// Reader fetches nodes' inventories with the host flow's tries and reply validation; it has no
// other call, and its transport refuses any other request.
type Reader struct {
	wrapper   *rpc.Wrapper
	transport readOnly
}

// NewReader reads through w and t.
func NewReader(w *rpc.Wrapper, t rpc.Transport) (*Reader, error) {
	if w == nil || t == nil {
		return nil, errors.New("plan reader: an rpc wrapper and transport are required")
	}
	return &Reader{wrapper: w, transport: readOnly{t}}, nil
}

// Inventory fetches identity's rpcutil#inventory.
func (r *Reader) Inventory(ctx context.Context, identity string) (*rpc.Inventory, error) {
	// No token: rpcutil takes none, and the node is never asked anything that would.
	return rpc.NewNode(r.wrapper, r.transport, identity, "", rpc.PauseFunc(notPaused)).Inventory(ctx)
}

// notPaused is the pause source of a plan's reads: a plan is stopped by its context alone.
func notPaused() bool { return false }
