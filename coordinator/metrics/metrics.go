// SPDX-License-Identifier: Apache-2.0

// Package metrics holds the coordinator's muster_coordinator_* Prometheus metrics, registered on a
// registry the process owns.
package metrics

import (
	"time"

	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/pkg/api"
)

// Sources are read at scrape time, so the gauges never go stale.
type Sources struct {
	Leader       func() bool
	Term         func() uint64
	AppliedIndex func() uint64
	LeasesActive func() int
	// DroppedObservations counts leadership notifications coalesced before anyone read them.
	DroppedObservations func() uint64
	// Nodes returns counts by region then state.
	Nodes func() (map[string]map[api.NodeState]int, error)
	// ClusterProtocol is the cluster protocol this member's ledger has applied.
	ClusterProtocol func() int
	// LedgerCommits counts the ledger transactions that applied log entries.
	LedgerCommits func() uint64
	// OldestHolds is how long each region's longest-held node has waited for approval, for
	// regions that hold any.
	OldestHolds func() (map[string]time.Duration, error)
}

// Metrics are the counters and histograms the coordinator updates as it works.
type Metrics struct {
	LeaseGrants       prometheus.Counter
	LeaseReplays      prometheus.Counter
	ReportReplays     prometheus.Counter
	LeaseNodesGranted prometheus.Counter
	LeaseRenewals     prometheus.Counter
	LeaseExpiries     prometheus.Counter
	StaleReports      prometheus.Counter
	ResultsApplied    *prometheus.CounterVec
	ApplyLatency      *prometheus.HistogramVec
	LeadershipChanges prometheus.Counter
	RetriedNodes      prometheus.Counter
	OperatorNodes     *prometheus.CounterVec
	EdgesRefused      prometheus.Counter
	FirstSeenRefused  prometheus.Counter
}

// New creates the metrics and registers them on reg, every one with the constant label
// member="<member>" (this member's Raft server id), so dashboards and alerts name the member
// rather than the scrape address.
func New(reg prometheus.Registerer, member string, src Sources) (*Metrics, error) {
	if member == "" {
		return nil, errors.New("register coordinator metrics: the member id for the member label is empty")
	}
	reg = prometheus.WrapRegistererWith(prometheus.Labels{"member": member}, reg)
	m := &Metrics{
		LeaseGrants: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_lease_grants_total", Help: "Leases granted by this member while leader."}),
		LeaseReplays: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_lease_replays_total", Help: "Acquire retries answered with the lease their request id was already granted."}),
		ReportReplays: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_report_replays_total", Help: "Report retries answered with the outcomes their request id already had."}),
		LeaseNodesGranted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_lease_nodes_granted_total", Help: "Nodes handed out in granted leases."}),
		LeaseRenewals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_lease_renewals_total", Help: "Lease renewals accepted."}),
		LeaseExpiries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_lease_expiries_total", Help: "Leases expired after expires_at plus grace."}),
		StaleReports: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_stale_reports_total", Help: "Results rejected because their lease or token is not the node's current one."}),
		ResultsApplied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "muster_coordinator_results_applied_total", Help: "Node results applied, by outcome."}, []string{"outcome"}),
		ApplyLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "muster_coordinator_apply_seconds", Help: "Time from raft apply to the FSM's response, by command.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}, []string{"command"}),
		LeadershipChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_leadership_changes_total", Help: "Times this member gained or lost leadership."}),
		RetriedNodes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_retried_nodes_total", Help: "Nodes the operator sent back to waiting (retry) through this member while leader."}),
		OperatorNodes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "muster_coordinator_operator_nodes_total", Help: "Nodes the operator forgot, banned, unbanned or moved through this member while leader, by verb."}, []string{"verb"}),
		EdgesRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_edges_refused_total", Help: "Heartbeats of a new edge name answered but not recorded, because the leader already kept the most edges it keeps."}),
		FirstSeenRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_first_seen_refused_total", Help: "New identities a register named that the leader refused because their region already held register.max_first_seen first-seen (waiting, never leased) nodes."}),
	}
	// Every verb's series exists from the start, so a dashboard reads 0, not "no data".
	for _, v := range api.Verbs() {
		m.OperatorNodes.WithLabelValues(v)
	}
	cs := []prometheus.Collector{
		m.LeaseGrants, m.LeaseReplays, m.ReportReplays, m.LeaseNodesGranted, m.LeaseRenewals, m.LeaseExpiries, m.StaleReports,
		m.ResultsApplied, m.ApplyLatency, m.LeadershipChanges, m.RetriedNodes, m.OperatorNodes, m.EdgesRefused, m.FirstSeenRefused,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "muster_coordinator_leader", Help: "1 when this member is the Raft leader."},
			func() float64 { return b2f(src.Leader()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "muster_coordinator_term", Help: "Current Raft term."},
			func() float64 { return float64(src.Term()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "muster_coordinator_applied_index", Help: "Last Raft index applied to the ledger."},
			func() float64 { return float64(src.AppliedIndex()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "muster_coordinator_leases_active", Help: "Outstanding leases in the ledger."},
			func() float64 { return float64(src.LeasesActive()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "muster_coordinator_cluster_protocol",
			Help: "Cluster protocol this member's ledger has applied; below the newest until every member is upgraded."},
			func() float64 { return float64(src.ClusterProtocol()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "muster_coordinator_ledger_commits_total",
			Help: "Ledger transactions that applied committed log entries, one per batch: applied entries over this is entries per commit."},
			func() float64 { return float64(src.LedgerCommits()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "muster_coordinator_leadership_observations_dropped_total",
			Help: "Leadership notifications coalesced because the leader loop had not read the previous one."},
			func() float64 { return float64(src.DroppedObservations()) }),
		&nodesCollector{src: src.Nodes, desc: prometheus.NewDesc("muster_coordinator_ledger_nodes",
			"Nodes in the ledger by region and state.", []string{"region", "state"}, nil)},
		&heldCollector{src: src.OldestHolds, desc: prometheus.NewDesc("muster_coordinator_ledger_held_oldest_seconds",
			"How long the region's longest-held node has waited for an operator's approve (regions that hold any).", []string{"region"}, nil)},
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register coordinator metrics: %w", err)
		}
	}
	return m, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

type nodesCollector struct {
	src  func() (map[string]map[api.NodeState]int, error)
	desc *prometheus.Desc
}

func (c *nodesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *nodesCollector) Collect(ch chan<- prometheus.Metric) {
	counts, err := c.src()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for region, states := range counts {
		for state, n := range states {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), region, string(state))
		}
	}
}

type heldCollector struct {
	src  func() (map[string]time.Duration, error)
	desc *prometheus.Desc
}

func (c *heldCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *heldCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	ages, err := c.src()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for region, age := range ages {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, age.Seconds(), region)
	}
}
