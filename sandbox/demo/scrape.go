// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Snapshot is what one read of the edge's /metrics says.
type Snapshot struct {
	// Discovered is choria_provisioner_discovered: nodes queued by discovery sweeps.
	Discovered int64
	// EventDiscovered is choria_provisioner_event_discovered: nodes queued by startup events.
	EventDiscovered int64
	// InFlight is choria_provisioner_busy_workers.
	InFlight int64
	// Provisioned is choria_provisioner_provisioned.
	Provisioned int64
	// Errors is choria_provisioner_provision_errors.
	Errors int64
	// Paused is choria_provisioner_paused: the edge holds back new work (in cluster mode, the
	// coordinators' pause flag as the edge last learned it).
	Paused bool
	// Outcomes is muster_edge_results_total by outcome.
	Outcomes map[string]int64
}

// scraper reads one edge's /metrics.
type scraper struct {
	url    string
	client *http.Client
}

// scrape reads and parses the metrics; the site label is not checked since each edge has one.
func (s *scraper) scrape(ctx context.Context) (Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return Snapshot{}, fmt.Errorf("scrape %s: %w", s.url, err)
	}
	res, err := s.client.Do(req)
	if err != nil {
		return Snapshot{}, fmt.Errorf("scrape %s: %w", s.url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, res.Body)
		return Snapshot{}, fmt.Errorf("scrape %s: status %s", s.url, res.Status)
	}
	return parseMetrics(res.Body)
}

// parseMetrics reads the Prometheus text format.
func parseMetrics(r io.Reader) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Snapshot{}, fmt.Errorf("parse metrics: %w", err)
	}
	s := Snapshot{Outcomes: map[string]int64{}}
	s.Discovered = sum(fams["choria_provisioner_discovered"])
	s.EventDiscovered = sum(fams["choria_provisioner_event_discovered"])
	s.InFlight = sum(fams["choria_provisioner_busy_workers"])
	s.Provisioned = sum(fams["choria_provisioner_provisioned"])
	s.Errors = sum(fams["choria_provisioner_provision_errors"])
	s.Paused = sum(fams["choria_provisioner_paused"]) > 0
	if f := fams["muster_edge_results_total"]; f != nil {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					s.Outcomes[l.GetValue()] += int64(value(m))
				}
			}
		}
	}
	return s, nil
}

func sum(f *dto.MetricFamily) int64 {
	var t float64
	for _, m := range f.GetMetric() {
		t += value(m)
	}
	return int64(t)
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}
