// SPDX-License-Identifier: Apache-2.0

package regionbench

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/seed96588659/muster/sandbox/chaos"
)

// entryCounts reads how many log entries of each command the leader proposed
// (muster_coordinator_apply_seconds counts one per proposal): what a node costs every member's
// Raft log and ledger, since each entry is a commit with its fsyncs on each of them.
func entryCounts(ctx context.Context, c *chaos.Cluster) (map[string]uint64, error) {
	leader, err := c.WaitLeader(ctx, 3, "")
	if err != nil {
		return nil, err
	}
	url := strings.TrimRight(leader.API, "/") + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	out := map[string]uint64{}
	for _, m := range fams["muster_coordinator_apply_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "command" {
				out[l.GetValue()] += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return out, nil
}
