// SPDX-License-Identifier: Apache-2.0

package register

import "time"

// Found is a node discovery saw in provisioning mode.
type Found struct {
	Identity string
	// Event is true when a startup lifecycle event announced the node: a new boot, which ends any
	// wait the source keeps after the node's last restart.
	Event bool
	// At is when discovery saw it, on the edge's monotonic clock; the edge drops sightings too
	// old to register (edge.Options.RegisterFresh).
	At time.Time
	// Since is the earliest moment the sighting may describe (a sweep's ping; for an event,
	// RegisterFresh before it was read); zero is At. A sighting the edge may have been stopped
	// after is not registered: it may be older than At says.
	Since time.Time
	// FirstSeen is true for a node the edge had not seen answer before: it answered its first
	// check just now. A source serves the nodes it knew before first (Local does).
	FirstSeen bool
}
