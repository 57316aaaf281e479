// SPDX-License-Identifier: Apache-2.0

package api

// Paths of a member's Go profiles (admin token; only where http.profiling is on): a CPU profile
// over ?seconds= (default 30, at most 300) and a heap profile, in pprof's format.
const (
	PathProfileCPU  = "/v1/admin/profile/cpu"
	PathProfileHeap = "/v1/admin/profile/heap"
)

// MaxProfileSeconds bounds one CPU profile.
const MaxProfileSeconds = 300
