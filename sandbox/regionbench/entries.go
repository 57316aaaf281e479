// SPDX-License-Identifier: Apache-2.0

package regionbench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/seed96588659/muster/sandbox/chaos"
	"github.com/seed96588659/muster/sandbox/labkit"
)

// leaderLog is what a run cost the leader's log and ledger.
type leaderLog struct {
	// entries counts the log entries of each command the leader proposed
	// (muster_coordinator_apply_seconds counts one per proposal).
	entries map[string]uint64
	// commits counts the ledger transactions that applied them
	// (muster_coordinator_ledger_commits_total): each costs every member a bbolt commit and its
	// fsyncs, so entries per commit is what grouping proposals saves.
	commits uint64
}

// readLeaderLog reads the leader's leaderLog from its metrics.
func readLeaderLog(ctx context.Context, c *chaos.Cluster) (leaderLog, error) {
	var out leaderLog
	leader, err := c.WaitLeader(ctx, 3, "")
	if err != nil {
		return out, err
	}
	url := strings.TrimRight(leader.API, "/") + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return out, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return out, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return out, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return out, fmt.Errorf("GET %s: %w", url, err)
	}
	out.entries = map[string]uint64{}
	for _, m := range fams["muster_coordinator_apply_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "command" {
				out.entries[l.GetValue()] += m.GetHistogram().GetSampleCount()
			}
		}
	}
	for _, m := range fams["muster_coordinator_ledger_commits_total"].GetMetric() {
		out.commits += uint64(m.GetCounter().GetValue())
	}
	return out, nil
}

// journalMean is the mean time the edges took to make an intent durable
// (muster_edge_journal_seconds); 0 without journals (standalone).
func journalMean(edges []*labkit.Edge) (time.Duration, error) {
	var sum float64
	var n uint64
	for _, e := range edges {
		fams, err := e.App.Metrics.Gatherer().Gather()
		if err != nil {
			return 0, fmt.Errorf("edge %s metrics: %w", e.Name, err)
		}
		for _, f := range fams {
			if f.GetName() != "muster_edge_journal_seconds" {
				continue
			}
			for _, m := range f.GetMetric() {
				sum += m.GetHistogram().GetSampleSum()
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	if n == 0 {
		return 0, nil
	}
	return time.Duration(sum / float64(n) * float64(time.Second)), nil
}
