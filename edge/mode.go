// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"context"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// Mode is how an edge works with the source of its leases, one of two named configurations:
// Standalone or Cluster. It decides what only the coordinators do: carry reports with acquires,
// keep registering the nodes an earlier run left unsettled, replicate an operator pause, and
// share one queue between the edges of a region.
type Mode struct {
	name    string
	source  lease.Source
	cluster lease.ClusterSource // nil standalone
}

// Standalone is one edge that is its own work queue (lease.Local): reports go alone, there is no
// pause but the edge's own, and a host that waited over two intervals since this edge's
// discovery last saw it is skipped, as choria-provisioner does.
func Standalone(src lease.Source) Mode { return Mode{name: "standalone", source: src} }

// Cluster is an edge of a region the coordinators serve (lease.Coordinator): acquires carry
// reports, the operator's pause is the coordinators' replicated flag, nodes an earlier run never
// had reported are registered at every sighting, and the region's ledger, shared by every edge,
// decides what waits (so no host is skipped by this edge's own last sighting: another edge's
// discovery may have seen it since).
func Cluster(src lease.ClusterSource) Mode { return Mode{name: "cluster", source: src, cluster: src} }

// Source is the lease source.
func (m Mode) Source() lease.Source { return m.source }

// String is the mode's name.
func (m Mode) String() string { return m.name }

// shared is true when the region's ledger, not this edge, decides what waits.
func (m Mode) shared() bool { return m.cluster != nil }

// carrier is the source whose acquires carry reports; nil standalone.
func (m Mode) carrier() lease.Carrier {
	if m.cluster == nil {
		return nil
	}
	return m.cluster
}

// unsettled tells the source of nodes an earlier run sent calls to and never had reported.
func (m Mode) unsettled(ids ...string) {
	if m.cluster != nil && len(ids) > 0 {
		m.cluster.Unsettled(ids...)
	}
}

// watchPause follows the coordinators' replicated pause until ctx ends; standalone returns at once.
func (m Mode) watchPause(ctx context.Context, changed func(bool, api.PauseMark)) {
	if m.cluster != nil {
		m.cluster.WatchPause(ctx, changed)
	}
}
