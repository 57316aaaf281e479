// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed96588659/muster/pkg/api"
)

// ledgerPage is the most nodes one listing asks for (the coordinators' largest page).
const ledgerPage = 10000

// Ledger reads the coordinators' ledger with a reader's credential; it has no call but the
// node listing, so a plan cannot register a node, take a lease or report through it.
type Ledger struct{ c *api.Client }

// NewLedger reads through c, whose credential must open the admin reads (the admin token or a
// certificate named in the coordinators' auth.readers): an edge's credential opens only the edge
// API, whose every call writes.
func NewLedger(c *api.Client) (*Ledger, error) {
	if c == nil {
		return nil, errors.New("plan ledger: an api client is required")
	}
	return &Ledger{c: c}, nil
}

// Of returns the ledger's record of each of ids that it holds, whatever its region.
func (l *Ledger) Of(ctx context.Context, ids []string) (map[string]*api.Node, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := map[string]*api.Node{}
	f := api.NodeFilter{Limit: ledgerPage}
	for {
		page, err := l.c.Nodes(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("read the ledger's nodes: %w", err)
		}
		for i := range page.Nodes {
			if n := &page.Nodes[i]; want[n.Identity] {
				out[n.Identity] = n
			}
		}
		if page.Next == "" || len(out) == len(want) {
			return out, nil
		}
		f.After = page.Next
	}
}
