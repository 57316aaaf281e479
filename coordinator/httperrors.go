// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"net/http"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/pkg/api"
)

// CoreErrors maps the coordinator core's sentinel errors to HTTP answers.
func CoreErrors() []ErrorMapping {
	return []ErrorMapping{
		{coordinator.ErrNotLeader, http.StatusMisdirectedRequest, api.CodeNotLeader},
		{coordinator.ErrNoLeader, http.StatusServiceUnavailable, api.CodeNoLeader},
		{coordinator.ErrNotReady, http.StatusServiceUnavailable, api.CodeUnavailable},
		{coordinator.ErrTimeout, http.StatusServiceUnavailable, api.CodeUnavailable},
		{coordinator.ErrClosed, http.StatusServiceUnavailable, api.CodeUnavailable},
		{coordinator.ErrUnknownLease, http.StatusNotFound, api.CodeUnknownLease},
		{coordinator.ErrTokenMismatch, http.StatusConflict, api.CodeTokenMismatch},
		{coordinator.ErrWrongRegion, http.StatusConflict, api.CodeWrongRegion},
		{coordinator.ErrWrongEdge, http.StatusForbidden, api.CodeWrongEdge},
		{coordinator.ErrLeaseExpired, http.StatusConflict, api.CodeLeaseExpired},
		{coordinator.ErrUnknownNode, http.StatusNotFound, api.CodeNotFound},
		{coordinator.ErrUnknownRegion, http.StatusNotFound, api.CodeNotFound},
		{coordinator.ErrNotRetryable, http.StatusConflict, api.CodeConflict},
		{coordinator.ErrNodeBusy, http.StatusConflict, api.CodeConflict},
		{coordinator.ErrClusterProtocol, http.StatusConflict, api.CodeConflict},
		{coordinator.ErrBadRequest, http.StatusBadRequest, api.CodeBadRequest},
	}
}
