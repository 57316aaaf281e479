// SPDX-License-Identifier: Apache-2.0

package lab_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/choria-io/go-choria/client/rpcutilclient"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// benchInventory times rpcutil#inventory round trips to one node with go-choria's generated
// client (which opens a new broker connection per call) and reports p50/p99 in ms.
func benchInventory(b *testing.B, node string) {
	fw := framework(b, 1)
	rc, err := rpcutilclient.New(fw)
	if err != nil {
		b.Fatal(err)
	}
	rc = rc.OptionTargets([]string{node}).OptionWorkers(1)
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		res, err := rc.Inventory().Do(ctx)
		took = append(took, time.Since(start))
		cancel()
		if err != nil {
			b.Fatalf("inventory %s: %v", node, err)
		}
		if outs := res.AllOutputs(); len(outs) != 1 || !outs[0].ResultDetails().OK() {
			b.Fatalf("inventory %s: %d replies", node, len(outs))
		}
	}
	b.StopTimer()
	slices.Sort(took)
	pct := func(p float64) float64 {
		return float64(took[int(p*float64(len(took)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

func BenchmarkInventory_RealNode(b *testing.B) {
	benchInventory(b, lab.RealIdentity(region, 2))
}

func BenchmarkInventory_EmulatedNode(b *testing.B) {
	benchInventory(b, shared.Region(region).EmulatedNodes()[3])
}

// BenchmarkLab_Start is the time to a ready lab of 3 real and 1,000 emulated nodes (release
// cache warm after the first iteration), and its stop.
func BenchmarkLab_Start(b *testing.B) {
	bin := filepath.Join(filepath.Dir(shared.Dir()), "muster-sandbox")
	var start, stop time.Duration
	for b.Loop() {
		t0 := time.Now()
		l, err := lab.Start(context.Background(), lab.Options{Dir: b.TempDir(), Real: 3, Emulated: 1000, NodeBinary: bin})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(l.Region("eu").Nodes()); n != 1003 {
			b.Fatalf("lab has %d nodes", n)
		}
		t1 := time.Now()
		if err := l.Stop(); err != nil {
			b.Fatal(err)
		}
		start += t1.Sub(t0)
		stop += time.Since(t1)
	}
	b.ReportMetric(start.Seconds()/float64(b.N), "s/start")
	b.ReportMetric(stop.Seconds()/float64(b.N), "s/stop")
}
