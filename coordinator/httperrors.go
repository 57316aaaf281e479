// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"net/http"

	"github.com/seed96588659/muster/pkg/api"
)

// HTTPErrors maps the member's sentinel errors (errors.go) to HTTP answers (httpapi.Config.Errors,
// and a carried report's refusal inside an acquire's answer).
func HTTPErrors() []api.ErrorMapping {
	return []api.ErrorMapping{
		{Err: ErrNotLeader, Status: http.StatusMisdirectedRequest, Code: api.CodeNotLeader},
		{Err: ErrNoLeader, Status: http.StatusServiceUnavailable, Code: api.CodeNoLeader},
		{Err: ErrNotReady, Status: http.StatusServiceUnavailable, Code: api.CodeUnavailable},
		{Err: ErrTimeout, Status: http.StatusServiceUnavailable, Code: api.CodeUnavailable},
		{Err: ErrClosed, Status: http.StatusServiceUnavailable, Code: api.CodeUnavailable},
		{Err: ErrUnknownLease, Status: http.StatusNotFound, Code: api.CodeUnknownLease},
		{Err: ErrTokenMismatch, Status: http.StatusConflict, Code: api.CodeTokenMismatch},
		{Err: ErrWrongRegion, Status: http.StatusConflict, Code: api.CodeWrongRegion},
		{Err: ErrWrongEdge, Status: http.StatusForbidden, Code: api.CodeWrongEdge},
		{Err: ErrLeaseExpired, Status: http.StatusConflict, Code: api.CodeLeaseExpired},
		{Err: ErrUnknownNode, Status: http.StatusNotFound, Code: api.CodeNotFound},
		{Err: ErrUnknownRegion, Status: http.StatusNotFound, Code: api.CodeNotFound},
		{Err: ErrNotRetryable, Status: http.StatusConflict, Code: api.CodeConflict},
		{Err: ErrNodeBusy, Status: http.StatusConflict, Code: api.CodeConflict},
		{Err: ErrClusterProtocol, Status: http.StatusConflict, Code: api.CodeConflict},
		{Err: ErrOtherCluster, Status: http.StatusConflict, Code: api.CodeOtherCluster},
		{Err: ErrBadRequest, Status: http.StatusBadRequest, Code: api.CodeBadRequest},
	}
}
