// SPDX-License-Identifier: Apache-2.0

// Package httpapi serves a coordinator member's edge API (register, acquire, renew, report,
// heartbeat) and admin API (status, nodes, node, pause, resume, join, remove, snapshot) over
// HTTP/JSON, with the wire types of pkg/api.
//
// Every write takes the same path, on the member that received it: method, credential (an edge
// token or a verified client certificate; the admin token for admin paths, compared in constant
// time and never logged), body size limit, strict decoding (unknown fields and trailing data
// refused), and the request's own Validate. Only then does a follower hand it to the leader:
// forwarded once (X-Muster-Forwarded stops a second hop) or, in redirect mode, answered 421 with
// the leader's address, which pkg/api's client follows. A leader that loses leadership mid-request
// does the same. Service errors become an api.ErrorBody through the ErrorMapping table, so the
// caller reads a machine code and a message naming the lease, node or field concerned.
//
// Status is always the receiving member's own view (it must answer when there is no leader);
// node reads go to the leader unless the caller passes stale=true.
package httpapi
