// SPDX-License-Identifier: Apache-2.0

package api

import "time"

// Lease grants one edge the exclusive right to provision a batch of nodes of one region until ExpiresAt.
type Lease struct {
	ID        string    `json:"id"`
	Edge      string    `json:"edge"`
	Region    string    `json:"region"`
	Nodes     []string  `json:"nodes"`
	Token     uint64    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	TTL       Duration  `json:"ttl"`
}
