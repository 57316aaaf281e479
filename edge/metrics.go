// SPDX-License-Identifier: Apache-2.0

package edge

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/metrics"
)

// edgeMetrics are choria-provisioner's metrics (o) and the edge's own muster_edge_ ones.
type edgeMetrics struct {
	o      *metrics.Registry
	site   string
	paused prometheus.Gauge
	busy   prometheus.Gauge

	results    *prometheus.CounterVec
	leases     prometheus.Counter
	leasesLost prometheus.Counter
	refused    prometheus.Counter
	flowTime   prometheus.Observer
	confirms   *prometheus.CounterVec
	renewals   *prometheus.CounterVec
	reported   *prometheus.CounterVec
	duplicates *prometheus.CounterVec

	journalFailures prometheus.Counter
	journalTime     prometheus.Observer
	eventsDropped   *prometheus.CounterVec
	newNodes        *prometheus.CounterVec
	sweepsCut       prometheus.Counter
}

func newEdgeMetrics(reg *metrics.Registry, site string) (*edgeMetrics, error) {
	labels := prometheus.Labels{"site": site}
	results := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "muster_edge_results_total", Help: "Host flow results by outcome", ConstLabels: labels}, []string{"outcome"})
	leases := prometheus.NewCounter(prometheus.CounterOpts{Name: "muster_edge_leases_acquired_total", Help: "Leases granted to this edge", ConstLabels: labels})
	lost := prometheus.NewCounter(prometheus.CounterOpts{Name: "muster_edge_leases_lost_total", Help: "Leases that ran out on the edge's clock while hosts were in flight", ConstLabels: labels})
	refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "muster_edge_leases_refused_total", Help: "Granted leases the edge refused for their shape (more nodes than asked, a node twice, an empty identity) and never acted on", ConstLabels: labels})
	flow := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "muster_edge_flow_seconds", Help: "How long one host flow took", ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)})
	confirms := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "muster_edge_confirmations_total", Help: "Unanswered restarts, upgrades and shutdowns settled by rediscovery, by what was found (withheld: not confirmed, left unreported)", ConstLabels: labels}, []string{"found"})
	renewals := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "muster_edge_lease_renewals_total", Help: "Lease renewals by result: ok, error (tried again), refused (the lease is gone)", ConstLabels: labels}, []string{"result"})
	reported := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "muster_edge_reported_results_total", Help: "Results handed to the lease source by what became of them: applied, rejected (stale lease or token), failed (not delivered)", ConstLabels: labels}, []string{"result"})
	duplicates := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "muster_edge_duplicate_responders_total", Help: "Host flows stopped because a second responder answered a credential-making action, by action (jwt, gen25519, gencsr)", ConstLabels: labels}, []string{"action"})
	journalFailures := prometheus.NewCounter(prometheus.CounterOpts{Name: "muster_edge_journal_failures_total", Help: "Intents the journal could not make durable; the first halts the edge", ConstLabels: labels})
	journalTime := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "muster_edge_journal_seconds", Help: "How long an intent took to be made durable in the journal (a slow disk shows here first)", ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)})
	eventsDropped := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "muster_edge_startup_events_dropped_total", Help: "Startup events dropped unread, by reason: oversized, or overflow (more waiting than the listener holds); a sweep finds their nodes", ConstLabels: labels}, []string{"reason"})
	newNodes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "muster_edge_new_nodes_total", Help: "Identities this edge had not seen answer before, by what became of them: admitted (answered their check, registered), unanswered, check_failed, sweep_limit (beyond new_nodes_per_sweep), rate_limit (beyond new_nodes_rate)", ConstLabels: labels}, []string{"result"})
	sweepsCut := prometheus.NewCounter(prometheus.CounterOpts{Name: "muster_edge_sweeps_cut_total", Help: "Discovery sweeps ended early at discovery_max_nodes identities", ConstLabels: labels})
	for _, c := range []prometheus.Collector{results, leases, lost, refused, flow, confirms, renewals, reported, duplicates, journalFailures, journalTime, eventsDropped, newNodes, sweepsCut} {
		if err := reg.Registerer().Register(c); err != nil {
			return nil, fmt.Errorf("register edge metric: %w", err)
		}
	}
	for _, o := range hostflow.Outcomes() {
		results.WithLabelValues(o.String())
	}
	m := &edgeMetrics{
		o: reg, site: site,
		paused:     reg.Paused.WithLabelValues(site),
		busy:       reg.BusyWorkers.WithLabelValues(site),
		results:    results,
		leases:     leases,
		leasesLost: lost,
		refused:    refused,
		flowTime:   flow,
		confirms:   confirms,
		renewals:   renewals,
		reported:   reported,
		duplicates: duplicates,

		journalFailures: journalFailures,
		journalTime:     journalTime,
		eventsDropped:   eventsDropped,
		newNodes:        newNodes,
		sweepsCut:       sweepsCut,
	}
	for _, r := range []string{"ok", "error", "refused"} {
		renewals.WithLabelValues(r)
	}
	for _, r := range []string{"applied", "rejected", "failed"} {
		reported.WithLabelValues(r)
	}
	for _, a := range []string{"jwt", "gen25519", "gencsr"} {
		duplicates.WithLabelValues(a)
	}
	for _, r := range newResults() {
		newNodes.WithLabelValues(r)
	}
	for _, r := range []string{"oversized", "overflow"} { // discovery's drop reasons
		eventsDropped.WithLabelValues(r)
	}
	// Present from the start, as choria-provisioner's are, so dashboards show zeros.
	m.paused.Set(0)
	m.busy.Set(0)
	for _, c := range []*prometheus.CounterVec{reg.Discovered, reg.EventDiscovered, reg.Provisioned, reg.ProvisionErrors, reg.DiscoverCycles, reg.DiscoveryErrors, reg.HelperErrors} {
		c.WithLabelValues(site)
	}
	reg.WorkQueueEntries.WithLabelValues(site).Set(0)
	reg.WaitingNodes.WithLabelValues(site).Set(0)
	return m, nil
}

// stats are the edge's running totals, for progress displays and tests.
type stats struct {
	discovered atomic.Int64
	inFlight   atomic.Int64
	outcomes   [hostflow.DuplicateResponder + 1]atomic.Int64
}

// Stats is a snapshot of the edge's totals.
type Stats struct {
	// Discovered counts nodes newly queued by discovery (a node found again after its result
	// counts again).
	Discovered int64
	// InFlight is how many host flows run now.
	InFlight int64
	// Outcomes counts final results by outcome.
	Outcomes map[hostflow.Outcome]int64
}

// Stats reads the edge's totals.
func (e *Edge) Stats() Stats {
	s := Stats{Discovered: e.stats.discovered.Load(), InFlight: e.stats.inFlight.Load(), Outcomes: map[hostflow.Outcome]int64{}}
	for _, o := range hostflow.Outcomes() {
		s.Outcomes[o] = e.stats.outcomes[o].Load()
	}
	return s
}
