// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"errors"
	"fmt"
)

// maxAcquireReports bounds the reports one Acquire applies (api.MaxCarriedReports).
const maxAcquireReports = 64

// Acquire is an edge's acquire with the results it carries: its Reports applied in order, then
// its Grant, in one log entry. A report and the grant that follows it were two entries, each a
// Raft append, a replication and a decode on every member; an edge finishing a lease asks for
// the next one at once, so they travel together. Each part is applied exactly as the command of
// its own would be, at the same index (the grant's token), and is answered on its own: a refused
// report refuses neither the others nor the grant.
type Acquire struct {
	Reports []Report `json:"reports,omitempty"`
	// Grant is nil when nothing was eligible: the reports go on their own.
	Grant *Grant `json:"grant,omitempty"`
}

// Type is the command's type byte.
func (Acquire) Type() CommandType { return CmdAcquire }

// AcquireResult answers each part of an Acquire.
type AcquireResult struct {
	// Reports holds, per report in order, its *ReportResult or the error refusing it.
	Reports []any
	// Grant is the *GrantResult or the error refusing the grant; nil without a grant.
	Grant any
}

// ReportOf is the answer to report i: its result, or the error that refused it.
func (r *AcquireResult) ReportOf(i int) (*ReportResult, error) {
	switch v := r.Reports[i].(type) {
	case *ReportResult:
		return v, nil
	case error:
		return nil, v
	}
	return nil, fmt.Errorf("report %d: no answer", i)
}

// GrantOf is the answer to the grant: its result, or the error that refused it.
func (r *AcquireResult) GrantOf() (*GrantResult, error) {
	switch v := r.Grant.(type) {
	case *GrantResult:
		return v, nil
	case error:
		return nil, v
	}
	return nil, errors.New("acquire carried no grant")
}

// applyAcquire applies the parts of c in order. A part's refusal is its answer; a storage failure
// aborts the whole transaction, as for any command. Every part validates before it writes, so a
// refused one leaves nothing behind for the next part to see.
func applyAcquire(t *txn, index uint64, c *Acquire) (any, error) {
	if cur := readProtocol(t.meta); cur < AcquireProtocol {
		return nil, fmt.Errorf("%w: acquire with reports needs cluster protocol %d; the cluster runs %d until every member is upgraded", ErrClusterProtocol, AcquireProtocol, cur)
	}
	switch {
	case len(c.Reports) == 0 && c.Grant == nil:
		return nil, errorf("acquire carries neither reports nor a grant")
	case len(c.Reports) > maxAcquireReports:
		return nil, errorf("acquire of %d reports exceeds the limit %d", len(c.Reports), maxAcquireReports)
	}
	res := &AcquireResult{Reports: make([]any, len(c.Reports))}
	for i := range c.Reports {
		rep := &c.Reports[i]
		r, err := applyReport(t, rep)
		if se, ok := err.(storageError); ok {
			return nil, se
		}
		res.Reports[i] = answer(t, rep, r, err)
	}
	if c.Grant != nil {
		g, err := applyGrant(t, index, c.Grant)
		if se, ok := err.(storageError); ok {
			return nil, se
		}
		res.Grant = answer(t, c.Grant, g, err)
	}
	return res, nil
}

// answer is a part's result or its refusal; an applied part's time raises the ledger's stamp, as
// decodeAnd does for a command of its own.
func answer(t *txn, part stamped, res any, err error) any {
	if err != nil {
		return err
	}
	t.saw(part.stamp())
	return res
}
