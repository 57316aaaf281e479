// SPDX-License-Identifier: Apache-2.0

package api

import "time"

// Lease grants one edge the exclusive right to provision a batch of nodes of one region. The edge
// counts it on its own monotonic clock for TTL from when it sent the acknowledged acquire or renew
// (see AcquireResponse.ValidUntil); ExpiresAt is the leader's time and only informs.
type Lease struct {
	ID        string    `json:"id"`
	Edge      string    `json:"edge"`
	Region    string    `json:"region"`
	Nodes     []string  `json:"nodes"`
	Token     uint64    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	TTL       Duration  `json:"ttl"`
}
