// SPDX-License-Identifier: Apache-2.0

// Package api holds the wire types of the coordinator's HTTP/JSON API (version 1, every path under
// /v1) and a Go client that finds the leader among any members it is given.
//
// All JSON keys are snake_case; times are RFC 3339 with nanoseconds (time.Time's own encoding);
// durations are Go duration strings such as "30s". Servers refuse unknown fields, so a client and
// a server of the same major version must agree on every key written here.
package api
