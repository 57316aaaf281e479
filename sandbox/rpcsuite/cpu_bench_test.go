// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
)

// BenchmarkConnCPU reports the test process's CPU per rpcutil#inventory over one Conn to a real
// node (a process of its own), signed and unsigned. The embedded broker runs in this process,
// so cpu-ms/rpc is the client's cost plus the broker's: an upper bound of the client's.
func BenchmarkConnCPU(b *testing.B) {
	c := newCaller(b, "edge-cpu.mcollective", 5*time.Second)
	for _, tc := range []struct {
		name     string
		unsigned bool
	}{{"signed", false}, {"unsigned", true}} {
		b.Run(tc.name, func(b *testing.B) {
			conn := c.dial(b, benchConn)
			req := rpc.Request{Agent: "rpcutil", Action: "inventory", Identity: realBench, Data: json.RawMessage(`{}`), Unsigned: tc.unsigned}
			b.ReportAllocs()
			start := testkit.SelfCPU(b)
			for b.Loop() {
				replies, err := conn.Request(context.Background(), req)
				if err != nil || len(replies) != 1 {
					b.Fatalf("%d replies, %v", len(replies), err)
				}
			}
			b.ReportMetric(float64(testkit.SelfCPU(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/rpc")
		})
	}
}
