// SPDX-License-Identifier: Apache-2.0

package helper_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/pkg/metrics"
)

// benchRequest is the size of a real request: an inventory of a few facts and agents.
var benchRequest = &helper.Request{
	Identity:  "n1.example.net",
	Inventory: `{"agents":["rpcutil","choria_provision","choria_util","discovery"],"facts":{"os":"linux","arch":"amd64","dc":"lon"},"version":"0.29.4","upgradable":true,"collectives":["provisioning"],"main_collective":"provisioning"}`,
}

func benchOptions(b *testing.B, args string) helper.Options {
	return helper.Options{Command: sampleHelper(b) + " --broker nats://127.0.0.1:4222 " + args, Site: "bench", Metrics: metrics.New()}
}

func checkBenchAnswer(b *testing.B, res *helper.Response, err error) {
	if err != nil {
		b.Fatal(err)
	}
	if res.Configuration["identity"] != benchRequest.Identity {
		b.Fatalf("answer for %q", res.Configuration["identity"])
	}
}

// BenchmarkExec forks the sample helper per request, as choria-provisioner does.
func BenchmarkExec(b *testing.B) {
	e, err := helper.NewExec(benchOptions(b, ""))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.Run(ctx, benchRequest)
		checkBenchAnswer(b, res, err)
	}
}

// BenchmarkPersistent exchanges lines with one sample helper: one caller at a time, and 64
// callers pipelining as an edge's workers do.
func BenchmarkPersistent(b *testing.B) {
	run := func(b *testing.B, parallel bool) {
		p, err := helper.NewPersistent(benchOptions(b, "--persistent"))
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		ctx := context.Background()
		res, err := p.Run(ctx, benchRequest) // start the process outside the timing
		checkBenchAnswer(b, res, err)
		b.ReportAllocs()
		b.ResetTimer()
		if !parallel {
			for b.Loop() {
				res, err := p.Run(ctx, benchRequest)
				checkBenchAnswer(b, res, err)
			}
			return
		}
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := p.Run(ctx, benchRequest)
				checkBenchAnswer(b, res, err)
			}
		})
	}
	b.Run("serial", func(b *testing.B) { run(b, false) })
	b.Run("64-callers", func(b *testing.B) { run(b, true) })
}
