// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRegistry_ExposesEveryProvisionerMetricWithSiteLabel(t *testing.T) {
	r := New()
	r.RPCTime.WithLabelValues("eu", "rpcutil#inventory").Observe(0.01)
	r.RPCErrors.WithLabelValues("eu", "rpcutil#inventory").Inc()
	for _, v := range []*prometheus.CounterVec{r.HelperErrors, r.HelperShutdownRequests, r.Discovered, r.EventDiscovered,
		r.DiscoverCycles, r.DiscoveryErrors, r.ProvisionErrors, r.Provisioned} {
		v.WithLabelValues("eu").Inc()
	}
	r.HelperTime.WithLabelValues("eu").Observe(0.2)
	for _, v := range []*prometheus.GaugeVec{r.BusyWorkers, r.WorkQueueEntries, r.WaitingNodes, r.Paused} {
		v.WithLabelValues("eu").Set(1)
	}

	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)

	for _, want := range []string{
		`choria_provisioner_rpc_time_count{rpc="rpcutil#inventory",site="eu"} 1`,
		`choria_provisioner_rpc_errors{rpc="rpcutil#inventory",site="eu"} 1`,
		`choria_provisioner_helper_time_count{site="eu"} 1`,
		`choria_provisioner_helper_errors{site="eu"} 1`,
		`choria_provisioner_helper_shutdown_requests{site="eu"} 1`,
		`choria_provisioner_discovered{site="eu"} 1`,
		`choria_provisioner_event_discovered{site="eu"} 1`,
		`choria_provisioner_discover_cycles{site="eu"} 1`,
		`choria_provisioner_discovery_errors{site="eu"} 1`,
		`choria_provisioner_provision_errors{site="eu"} 1`,
		`choria_provisioner_busy_workers{site="eu"} 1`,
		`choria_provisioner_provisioned{site="eu"} 1`,
		`choria_provisioner_work_queue_entries{site="eu"} 1`,
		`choria_provisioner_waiting_nodes{site="eu"} 1`,
		`choria_provisioner_paused{site="eu"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

func TestRegistry_InstancesAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.Provisioned.WithLabelValues("eu").Inc()

	if got := testutil.ToFloat64(b.Provisioned.WithLabelValues("eu")); got != 0 {
		t.Fatalf("second registry saw the first one's counter: %v", got)
	}

	extra := prometheus.NewCounter(prometheus.CounterOpts{Name: "muster_test_total", Help: "test"})
	if err := a.Registerer().Register(extra); err != nil {
		t.Fatalf("registering a muster_ metric: %v", err)
	}
	if err := b.Registerer().Register(extra); err != nil {
		t.Fatalf("same collector on a second registry must be allowed: %v", err)
	}
}

func TestRegistry_RPCAttemptsCountsTimedAttempts(t *testing.T) {
	r := New()
	if got := r.RPCAttempts("eu", "rpcutil#inventory"); got != 0 {
		t.Fatalf("fresh registry: %d", got)
	}
	r.RPCTime.WithLabelValues("eu", "rpcutil#inventory").Observe(0.1)
	r.RPCTime.WithLabelValues("eu", "rpcutil#inventory").Observe(0.2)
	r.RPCTime.WithLabelValues("us", "rpcutil#inventory").Observe(0.2)
	if got := r.RPCAttempts("eu", "rpcutil#inventory"); got != 2 {
		t.Fatalf("RPCAttempts = %d, want 2", got)
	}
}
