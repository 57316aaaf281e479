// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics count API requests per route and status, and forwards to the leader.
type metrics struct {
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	forwarded *prometheus.CounterVec
	// eventReaders is the number of open event streams; eventRefused counts streams refused at
	// the cap and eventCut those cut because the reader did not take a write in time.
	eventReaders prometheus.Gauge
	eventRefused prometheus.Counter
	eventCut     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "muster_coordinator_http_requests_total",
			Help: "API requests answered by this member, by route and HTTP status",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "muster_coordinator_http_request_seconds",
			Help:    "Time to answer an API request, long polls included, by route",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 30, 120},
		}, []string{"route"}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "muster_coordinator_http_forwarded_total",
			Help: "Requests this member could not serve itself, by route and outcome (ok, redirected, no_leader, not_ready, failed; served_stale: a read answered from its own copy instead)",
		}, []string{"route", "outcome"}),
		eventReaders: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "muster_coordinator_event_readers",
			Help: "Event streams (GET /v1/events) this member serves now",
		}),
		eventRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_event_readers_refused_total",
			Help: "Event streams refused because this member served http.max_event_readers already",
		}),
		eventCut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "muster_coordinator_event_readers_cut_total",
			Help: "Event streams cut because the reader did not take a write within http.event_write_timeout",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.forwarded, m.eventReaders, m.eventRefused, m.eventCut} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("httpapi metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observe(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}
