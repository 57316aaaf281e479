// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"fmt"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// view is what the cluster would do with a node discovered in region, from the ledger's record
// of it (nil: the ledger does not hold it); now is compared with the ledger's times, which are
// the leader's clock, so a plan near such a time may be a moment off.
func view(n *api.Node, region string, now time.Time) *ClusterView {
	if n == nil {
		return &ClusterView{Offered: true, Would: "new to the ledger: registered at the next sweep and offered to an edge of region " + region}
	}
	v := &ClusterView{
		State: n.State, Region: api.Printable(n.Region), Edge: api.Printable(n.Edge), LeaseToken: n.LeaseToken,
		Attempts: n.Attempts, NotBefore: n.NotBefore, FinishedAt: n.FinishedAt,
	}
	if n.Region != region {
		v.Would = fmt.Sprintf("registered in region %s: an edge of region %s may not take it over", v.Region, region)
		return v
	}
	switch n.State {
	case api.StateWaiting:
		v.Offered = true
		v.Would = "waiting: offered to the next edge of the region that asks"
		if n.NotBefore.After(now) {
			v.Would = "waiting: offered from " + stamp(n.NotBefore)
		}
	case api.StateLeased:
		v.Would = fmt.Sprintf("leased to edge %s (token %d): no other edge acts on it until that lease ends", v.Edge, n.LeaseToken)
	case api.StateProvisioned, api.StateShutdown, api.StateGone:
		v.Offered = true
		v.Would = fmt.Sprintf("%s at %s: seen in provisioning mode again, it waits again once lease.reprovision_after has passed since then", n.State, stamp(n.FinishedAt))
	case api.StateDeferred:
		v.Offered = !n.NotBefore.After(now)
		v.Would = "deferred: offered again from " + stamp(n.NotBefore)
	case api.StateAbandoned:
		v.Would = fmt.Sprintf("abandoned after %d attempts: offered again only after an operator's retry", n.Attempts)
	case api.StateBanned:
		v.Would = "banned: never offered until an operator unbans it"
	default:
		v.Would = fmt.Sprintf("state %q, which this build does not know", api.Printable(string(n.State)))
	}
	return v
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
