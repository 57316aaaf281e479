// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/seed96588659/muster/edge/register"
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

// Answers matches the answers an acquire returned to the reports it carried, sent[i] to got[i]:
// a report without its answer (an older coordinator, or one that lost it) is left unanswered,
// to be sent again alone, and so is every report when the answers do not line up.
func Answers(sent []api.ReportRequest, got []api.ReportAnswer) []Delivered {
	out := make([]Delivered, len(sent))
	for i := range sent {
		if len(got) != len(sent) || got[i].RequestID != sent[i].RequestID {
			continue
		}
		out[i].Answered = true
		if e := got[i].Error; e != nil {
			out[i].Err = fmt.Errorf("report %d results of lease %s: %w", len(sent[i].Results), sent[i].LeaseID, &api.Error{Code: e.Code, Message: e.Error, Leader: e.Leader})
		} else {
			out[i].Response = got[i].ReportResponse
		}
	}
	return out
}

// Reported tells the registration filter q what became of a report of ids, answered with err
// on its last try: its nodes are forgotten once it was applied or refused for good (Stale), and
// registered at every sighting until Resend when it was given up, since it may still be applied.
func Reported(q *register.Queued, now time.Time, err error, ids ...string) {
	if Ends(err) {
		q.Forget(ids...)
	} else {
		q.Unsure(now, ids...)
	}
}

// Ends says whether a report's answer err ends it: applied (nil) or refused for good (Stale).
// Any other error leaves the report to be tried again, or given up while it may still be
// applied, and the journal intents of its results open.
func Ends(err error) bool { return err == nil || Stale(err) }
