// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"slices"
	"testing"
	"time"
)

// Percentile is the p-th quantile (0 to 1, nearest rank) of d, which it sorts; 0 for none.
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(int(p*float64(len(d))), len(d)-1)]
}

// ReportLatency reports the median and the 99th percentile of d as what-p50-ms and what-p99-ms
// (with fewer than 100 samples, p99 is the largest).
func ReportLatency(b *testing.B, what string, d []time.Duration) {
	ms := func(p float64) float64 { return float64(Percentile(d, p)) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.50), what+"-p50-ms")
	b.ReportMetric(ms(0.99), what+"-p99-ms")
}
