// SPDX-License-Identifier: Apache-2.0

// Package register holds what an edge registers with its source: the nodes discovery found
// (Found), and its memory of what the registrations answered (Queued), which keeps a sweep from
// registering again a node the coordinators already queued.
package register
