// SPDX-License-Identifier: Apache-2.0

// Package discovery finds nodes in provisioning mode the way choria-provisioner does: broadcast
// discovery in collective "provisioning" with agent filter choria_provision, plus the
// choria.lifecycle.event.startup.<component> events that nodes announce when they boot.
//
// Everything runs over the edge's own broker connection with plain NATS subscriptions:
// go-choria's QueueSubscribe races under -race when a broadcast discovery ends on its deadline.
// Replies are read only as far as the transport's sender, so a sweep of 10,000 nodes stays cheap.
// What waits to be read is bounded (EventLimits for startup events, fixed bounds for a sweep's
// replies, Options.MaxNodes for the identities one sweep takes): anyone on the provisioning
// broker may publish, and a flood is dropped, counted, and made good by the next sweep rather
// than held in memory. A reply naming an identity the coordinators' API would refuse is skipped.
package discovery
