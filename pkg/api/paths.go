// SPDX-License-Identifier: Apache-2.0

package api

// Paths of version 1 of the API. Edge paths take a POST with a JSON body; admin reads are GETs.
const (
	PathRegister  = "/v1/edge/register"
	PathAcquire   = "/v1/edge/acquire"
	PathRenew     = "/v1/edge/renew"
	PathReport    = "/v1/edge/report"
	PathHeartbeat = "/v1/edge/heartbeat"

	PathStatus   = "/v1/admin/status"
	PathNodes    = "/v1/admin/nodes"
	PathNode     = "/v1/admin/nodes/" // followed by the node's identity, path-escaped
	PathPause    = "/v1/admin/pause"
	PathResume   = "/v1/admin/resume"
	PathJoin     = "/v1/admin/join"
	PathRemove   = "/v1/admin/remove"
	PathSnapshot = "/v1/admin/snapshot"
)
