// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"context"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Delivery is the results of one lease on their way to the source, under one request id for every
// try, with an acquire or alone: the source applies it once however often it is sent.
type Delivery struct {
	Lease     api.Lease
	Results   []api.NodeResult
	RequestID string
}

// Delivered is the source's answer to one delivery an acquire carried.
type Delivered struct {
	// Answered is false when the answer did not say what became of it (an older source): it
	// must be sent again with Deliver.
	Answered bool
	Response api.ReportResponse
	// Err is the refusal of the whole delivery (Stale tells a lease no longer this edge's).
	Err error
}

// Carrier is a Source whose acquires can carry deliveries: one round trip and one log entry
// where a report and the next acquire were two.
type Carrier interface {
	// Carries reports whether the next acquire may carry deliveries: the source's last answer
	// said it takes them.
	Carries() bool
	// AcquireCarrying is Acquire, delivering ds with it. answers[i] answers ds[i]. An error means
	// none is known delivered: each is sent again with Deliver, under its request id.
	AcquireCarrying(ctx context.Context, max int, wait time.Duration, ds []Delivery) (Grant, []Delivered, error)
	// Deliver is Report under d's request id.
	Deliver(ctx context.Context, d Delivery) (api.ReportResponse, error)
}

// NewDelivery is the results of lease l under a fresh request id.
func NewDelivery(l api.Lease, results []api.NodeResult) Delivery {
	return Delivery{Lease: l, Results: results, RequestID: newRequestID()}
}

// Identities are the nodes results are for, in order.
func Identities(results []api.NodeResult) []string {
	ids := make([]string, len(results))
	for i, r := range results {
		ids[i] = r.Identity
	}
	return ids
}
