// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"fmt"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
)

// Carried is a report an acquire carries: results of a lease its edge finished.
type Carried struct {
	Ref       Ref
	RequestID string
	Results   []ledger.Result
}

// CarriedAnswer is what became of a carried report: its result, or the refusal of the whole report.
type CarriedAnswer struct {
	Result *ledger.ReportResult
	Err    error
}

// carrying holds an acquire's reports until they are proposed, with its grant or alone, and
// their answers after.
type carrying struct {
	pending []Carried
	answers []CarriedAnswer
}

// carry proposes the pending reports, with grant when it is not nil, and answers the grant (nil
// without one). From cluster protocol 6 they are one Acquire entry; below it each report is a
// Report entry of its own and the grant follows, as when the edge sent them apart. An error is a
// proposal that failed: the reports' answers are unknown then, and the edge sends them again
// alone under their request ids, which the ledger applies once.
func (m *Manager) carry(ctx context.Context, c *carrying, now time.Time, grant *ledger.Grant) (grantRes any, grantErr, err error) {
	reports := c.pending
	c.pending = nil
	cur, err := m.ledger.ClusterProtocol()
	if err != nil {
		return nil, nil, fmt.Errorf("read cluster protocol: %w", err)
	}
	if cur < ledger.AcquireProtocol {
		for _, r := range reports {
			rr, rerr := m.Report(ctx, r.Ref, r.RequestID, r.Results)
			if rerr != nil && !ledger.Refused(rerr) {
				return nil, nil, rerr
			}
			c.answers = append(c.answers, CarriedAnswer{Result: rr, Err: rerr})
		}
		if grant == nil {
			return nil, nil, nil
		}
		res, gerr := m.propose(ctx, grant)
		return res, gerr, nil
	}
	cmd := &ledger.Acquire{Reports: make([]ledger.Report, len(reports)), Grant: grant}
	for i, r := range reports {
		cmd.Reports[i] = m.reportCommand(now, r.Ref, r.RequestID, r.Results)
	}
	res, err := m.propose(ctx, cmd)
	if err != nil {
		return nil, nil, err
	}
	ar := res.(*ledger.AcquireResult)
	for i, r := range reports {
		rr, rerr := ar.ReportOf(i)
		m.countReport(r.Results, rr, rerr)
		c.answers = append(c.answers, CarriedAnswer{Result: rr, Err: rerr})
	}
	if grant == nil {
		return nil, nil, nil
	}
	g, gerr := ar.GrantOf()
	if gerr != nil {
		return nil, gerr, nil
	}
	return g, nil, nil
}
