// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// failures records what a check reports instead of failing the test that runs it.
type failures struct {
	testing.TB
	errs []string
}

func (f *failures) Helper() {}

func (f *failures) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

// An edge acts on a lease's nodes from the answer that names them, not from its send: an acquire
// sent while another edge held the nodes, and answered after that edge reported them, is no
// overlap (TestCluster_NoDoubleGrantUnderChurn failed on it under load: the ledger granted the
// nodes only after the report applied, but the acquire had been sent before it). One answered
// while the other edge may still act is.
func TestHolds_AnEdgeActsFromTheAnswerNotFromTheSend(t *testing.T) {
	s := time.Second
	earlier := &api.Lease{Token: 60, Edge: "edge-3", Nodes: []string{"n1"}, TTL: api.Duration(30 * s)}
	later := &api.Lease{Token: 70, Edge: "edge-0", Nodes: []string{"n1"}, TTL: api.Duration(30 * s)}
	for _, c := range []struct {
		name     string
		received time.Duration
		overlap  bool
	}{
		{"answered after the report was sent", 36 * s, false},
		{"answered while the other edge may still act", 34 * s, true},
	} {
		h := newHolds(0)
		h.acked(earlier, 29*s, 29*s, 0)
		h.released(earlier.Token, earlier.Nodes, 35*s)
		h.acked(later, 29*s, c.received, 0)
		f := &failures{TB: t}
		h.check(f)
		if got := len(f.errs) > 0; got != c.overlap {
			t.Errorf("%s: overlap found %v (%v), want %v", c.name, got, f.errs, c.overlap)
		}
	}
}
