// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/rpc"
)

// benchConn is the benchmarks' Conn. The grace only delays the return of a call already
// answered; a benchmark of CPU cost and latency wants it small.
var benchConn = rpc.ConnOptions{Timeout: 5 * time.Second, DuplicateGrace: time.Microsecond}

// BenchmarkInventory measures one rpcutil#inventory against an emulated node: "raw" is the
// transport alone, "wrapped" adds the wrapper, validation and decoding; the difference is the
// wrapper's own cost. "conn" keeps one broker connection, "percall" builds go-choria's client per
// call as choria-provisioner does.
func BenchmarkInventory(b *testing.B) {
	c := newCaller(b, "edge-bench.mcollective", 5*time.Second)
	conn := c.dial(b, benchConn)

	req := rpc.Request{Agent: "rpcutil", Action: "inventory", Identity: nodeBench, Data: json.RawMessage(`{}`)}
	for name, tr := range map[string]rpc.Transport{"conn": conn, "percall": c.percall} {
		b.Run(name+"/raw", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				replies, err := tr.Request(context.Background(), req)
				if err != nil || len(replies) != 1 {
					b.Fatalf("%d replies, %v", len(replies), err)
				}
			}
		})
		b.Run(name+"/wrapped", func(b *testing.B) {
			n := c.node(tr, nodeBench, nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := n.Inventory(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInventoryParallel is the throughput of one shared Conn under many concurrent callers,
// as an edge with many host flows in flight uses it.
func BenchmarkInventoryParallel(b *testing.B) {
	c := newCaller(b, "edge-bench-par.mcollective", 5*time.Second)
	conn := c.dial(b, benchConn)
	n := c.node(conn, nodeBench, nil)

	b.SetParallelism(16)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := n.Inventory(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInventoryLatency reports the p50 and p99 round trip of rpcutil#inventory over one Conn
// against an emulated and a real node (a real node that is still in provisioning mode).
func BenchmarkInventoryLatency(b *testing.B) {
	c := newCaller(b, "edge-latency.mcollective", 5*time.Second)
	conn := c.dial(b, benchConn)

	for name, identity := range map[string]string{"emulated": nodeBench, "real": realBench} {
		b.Run(name, func(b *testing.B) {
			req := rpc.Request{Agent: "rpcutil", Action: "inventory", Identity: identity, Data: json.RawMessage(`{}`)}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				replies, err := conn.Request(context.Background(), req)
				took = append(took, time.Since(start))
				if err != nil || len(replies) != 1 {
					b.Fatalf("%d replies, %v", len(replies), err)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
