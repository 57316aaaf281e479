// SPDX-License-Identifier: Apache-2.0

package api

import (
	"errors"
	"fmt"
)

// Code is the machine-readable reason of an API error.
type Code string

// Error codes; the HTTP status each travels with is noted.
const (
	// CodeBadRequest is a request that is well-formed JSON but invalid (400).
	CodeBadRequest Code = "bad_request"
	// CodeMalformed is a body that is not one JSON value of the expected shape (400).
	CodeMalformed Code = "malformed_json"
	// CodeUnknownField is a body with a key the server does not know (400).
	CodeUnknownField Code = "unknown_field"
	// CodeBodyTooLarge is a body over the configured size limit (413).
	CodeBodyTooLarge Code = "body_too_large"
	// CodeUnauthorized is a missing or wrong credential (401).
	CodeUnauthorized Code = "unauthorized"
	// CodeForbidden is a valid credential used on an endpoint it does not open (403).
	CodeForbidden Code = "forbidden"
	// CodeNotFound is an unknown path or node (404).
	CodeNotFound Code = "not_found"
	// CodeMethodNotAllowed is a known path called with the wrong method (405).
	CodeMethodNotAllowed Code = "method_not_allowed"
	// CodeUnknownLease is a lease id the leader does not hold (404).
	CodeUnknownLease Code = "unknown_lease"
	// CodeTokenMismatch is a lease id with a token that is not the lease's current one (409).
	CodeTokenMismatch Code = "token_mismatch"
	// CodeLeaseExpired is a renewal or report after the lease's expiry; acquire again (409).
	CodeLeaseExpired Code = "lease_expired"
	// CodeWrongRegion is a request whose region does not match the lease or node (409).
	CodeWrongRegion Code = "wrong_region"
	// CodeWrongEdge is a request for a lease another edge holds, or a credential used for an edge
	// name or region it is not bound to (403).
	CodeWrongEdge Code = "wrong_edge"
	// CodeConflict is a request that contradicts the ledger, such as a duplicate member (409).
	CodeConflict Code = "conflict"
	// CodeOtherCluster is a join from a member whose data directory belongs to another cluster (409).
	CodeOtherCluster Code = "other_cluster"
	// CodeNotLeader is a member that neither leads nor forwarded; Leader names the leader's API address (421).
	CodeNotLeader Code = "not_leader"
	// CodeNoLeader is a cluster without a known leader at the moment (503).
	CodeNoLeader Code = "no_leader"
	// CodeUnavailable is a member that cannot serve now, e.g. shutting down (503).
	CodeUnavailable Code = "unavailable"
	// CodeInternal is a failure on the server side (500).
	CodeInternal Code = "internal"
)

// HeaderLeader carries the leader's API base URL (scheme://host:port) on not-leader answers and redirects.
const HeaderLeader = "X-Muster-Leader"

// HeaderForwarded marks a request a member already forwarded, so it is never forwarded twice.
const HeaderForwarded = "X-Muster-Forwarded"

// ErrorBody is the JSON body of every non-2xx answer.
type ErrorBody struct {
	Error  string `json:"error"`
	Code   Code   `json:"code"`
	Leader string `json:"leader,omitempty"`
}

// Error is a non-2xx answer decoded by the client.
type Error struct {
	Status  int
	Code    Code
	Message string
	Leader  string
	Member  string
}

// Error formats the member, status, code and message.
func (e *Error) Error() string {
	if e.Member != "" {
		return fmt.Sprintf("%s: %d %s: %s", e.Member, e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// IsCode reports whether err is, or wraps, an *Error with the given code.
func IsCode(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// ErrorMapping turns a sentinel error of a service into an HTTP status and API code (matched
// with errors.Is).
type ErrorMapping struct {
	Err    error
	Status int
	Code   Code
}

// Classify is the status and code the first of mappings matching err gives it; internal (500)
// when none matches. A service answering an error inside a 200 (a report an acquire carried)
// codes it as its server would.
func Classify(mappings []ErrorMapping, err error) (int, Code) {
	for _, m := range mappings {
		if errors.Is(err, m.Err) {
			return m.Status, m.Code
		}
	}
	return 500, CodeInternal
}
