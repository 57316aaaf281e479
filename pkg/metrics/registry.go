// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Registry owns one process's Prometheus registry and the choria-provisioner compatible metrics.
type Registry struct {
	reg *prometheus.Registry

	// RPCTime observes every RPC attempt, labelled site and rpc (agent#action).
	RPCTime *prometheus.SummaryVec
	// RPCErrors counts wrapper calls that gave up, labelled site and rpc.
	RPCErrors *prometheus.CounterVec
	// HelperTime observes each run of the site helper.
	HelperTime *prometheus.SummaryVec
	// HelperErrors counts failed helper runs.
	HelperErrors *prometheus.CounterVec
	// HelperShutdownRequests counts helper shutdown requests that the node confirmed.
	HelperShutdownRequests *prometheus.CounterVec
	// Discovered counts nodes found by broadcast discovery.
	Discovered *prometheus.CounterVec
	// EventDiscovered counts nodes found through lifecycle events.
	EventDiscovered *prometheus.CounterVec
	// DiscoverCycles counts discovery cycles.
	DiscoverCycles *prometheus.CounterVec
	// DiscoveryErrors counts failed discovery cycles.
	DiscoveryErrors *prometheus.CounterVec
	// ProvisionErrors counts host flows that ended in an error.
	ProvisionErrors *prometheus.CounterVec
	// BusyWorkers is the number of host flows in progress.
	BusyWorkers *prometheus.GaugeVec
	// Provisioned counts nodes provisioned successfully.
	Provisioned *prometheus.CounterVec
	// WorkQueueEntries is the number of nodes queued for a worker.
	WorkQueueEntries *prometheus.GaugeVec
	// WaitingNodes is the number of nodes known and not yet provisioned.
	WaitingNodes *prometheus.GaugeVec
	// Paused is 1 while provisioning is paused for the site.
	Paused *prometheus.GaugeVec
}

// New builds a Registry with the Go and process collectors and every provisioner metric.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	site := []string{"site"}
	siteRPC := []string{"site", "rpc"}
	summary := func(name, help string, labels []string) *prometheus.SummaryVec {
		v := prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: name, Help: help}, labels)
		reg.MustRegister(v)
		return v
	}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		reg.MustRegister(v)
		return v
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, site)
		reg.MustRegister(v)
		return v
	}

	// Names and help texts are choria-provisioner's, verbatim (typos included), so existing
	// dashboards and alert rules match.
	return &Registry{
		reg:                    reg,
		RPCTime:                summary("choria_provisioner_rpc_time", "How long it took to perform RPC requests", siteRPC),
		RPCErrors:              counter("choria_provisioner_rpc_errors", "How many rpc related errors were encountered", siteRPC),
		HelperTime:             summary("choria_provisioner_helper_time", "How long it took to run the helper", site),
		HelperErrors:           counter("choria_provisioner_helper_errors", "How many helper related errors were encountered", site),
		HelperShutdownRequests: counter("choria_provisioner_helper_shutdown_requests", "Host many times the helper asked for a node to be shutdown and it succeeded", site),
		Discovered:             counter("choria_provisioner_discovered", "How many nodes were found through discovery", site),
		EventDiscovered:        counter("choria_provisioner_event_discovered", "How many nodes were found through receiving an event about them", site),
		DiscoverCycles:         counter("choria_provisioner_discover_cycles", "How many discovery cycles were ran", site),
		DiscoveryErrors:        counter("choria_provisioner_discovery_errors", "How many discovery related errors were encountered", site),
		ProvisionErrors:        counter("choria_provisioner_provision_errors", "How many provision related errors were encountered", site),
		BusyWorkers:            gauge("choria_provisioner_busy_workers", "How many workers are busy provisioning nodes"),
		Provisioned:            counter("choria_provisioner_provisioned", "How many nodes were successfully provisioned", site),
		WorkQueueEntries:       gauge("choria_provisioner_work_queue_entries", "Number of nodes on the work queue waiting to be provisioned"),
		WaitingNodes:           gauge("choria_provisioner_waiting_nodes", "The number of nodes currently waiting to be provisioned"),
		Paused:                 gauge("choria_provisioner_paused", "Indicates if the provisioner is paused"),
	}
}

// Registerer accepts further collectors, such as the coordinator's muster_ metrics.
func (r *Registry) Registerer() prometheus.Registerer { return r.reg }

// Gatherer exposes the registry for tests and custom exporters.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// Handler serves the registry in the Prometheus exposition format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg})
}

// RPCAttempts is how many attempts of rpc (agent#action) for site were timed so far. It reads a
// gathered copy so that asking never creates the series.
func (r *Registry) RPCAttempts(site, rpc string) uint64 {
	families, err := r.reg.Gather()
	if err != nil {
		return 0
	}
	for _, f := range families {
		if f.GetName() != "choria_provisioner_rpc_time" {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, site, rpc) {
				return m.GetSummary().GetSampleCount()
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, site, rpc string) bool {
	var okSite, okRPC bool
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "site":
			okSite = l.GetValue() == site
		case "rpc":
			okRPC = l.GetValue() == rpc
		}
	}
	return okSite && okRPC
}
