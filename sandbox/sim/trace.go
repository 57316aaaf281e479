// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Line is one event of a run's trace.
type Line struct {
	At   int64
	Who  string
	Text string
	// Tags are the nodes, leases and edges the line concerns; none for cluster-wide events.
	Tags []string
}

func (s *Sim) tracef(tags []string, who, format string, args ...any) {
	if !s.tracing {
		return
	}
	s.trace = append(s.trace, Line{At: s.now, Who: who, Text: fmt.Sprintf(format, args...), Tags: slices.Clone(tags)})
}

// fmtTime is real time since the run began.
func fmtTime(t int64) string { return fmt.Sprintf("+%.6fs", time.Duration(t).Seconds()) }

// fmtStamp is a ledger or wall time as an offset from the run's epoch (real time 0, unskewed).
func fmtStamp(t time.Time) string {
	if t.IsZero() {
		return "(none)"
	}
	return fmt.Sprintf("L%+.6fs", time.Duration(t.UnixNano()-epoch).Seconds())
}

// leaseName is a lease id shortened for reading, with its token.
func leaseName(id string, token uint64) string {
	return fmt.Sprintf("%s/t%d", id[:min(len(id), 10)], token)
}

func leaseNames(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[:min(len(id), 10)]
	}
	return out
}

// WriteTrace writes lines in time order; with focus, only the cluster-wide lines and those
// about one of focus's subjects.
func WriteTrace(w io.Writer, lines []Line, focus []string) error {
	for _, l := range lines {
		if len(focus) > 0 && len(l.Tags) > 0 && !slices.ContainsFunc(l.Tags, func(t string) bool { return slices.Contains(focus, t) }) {
			continue
		}
		if _, err := fmt.Fprintf(w, "%14s %-6s %s\n", fmtTime(l.At), l.Who, l.Text); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	return nil
}
