// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/broker"
	"github.com/seed96588659/muster/sandbox/internal/choriadiscover"
)

const benchFleet = 10_000

// BenchmarkDiscovery_FindsAll10000 is the time for one broadcast discovery to hear from every
// node of a 10,000-node fleet, ending with go-choria's own broadcast discoverer finding all.
func BenchmarkDiscovery_FindsAll10000(b *testing.B) {
	l := startLab(b, benchFleet, nil, nil)
	fw := l.framework(b, "bench-eu.mcollective")
	var total time.Duration
	cpu0 := testkit.SelfCPU(b)
	b.ResetTimer()
	for range b.N {
		found, took, err := choriadiscover.Broadcast(fw, benchFleet, 60*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if len(found) != benchFleet {
			b.Fatalf("discovery heard %d of %d nodes within 60s", len(found), benchFleet)
		}
		total += took
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/all-found")
	// Fleet, broker and client together: the whole sandbox's CPU for one 10,000-node discovery.
	b.ReportMetric(float64((testkit.SelfCPU(b)-cpu0).Milliseconds())/float64(b.N), "process-cpu-ms/discovery")
	b.ReportMetric(0, "ns/op")

	got := goChoriaDiscover(b, fw, 10*time.Second, nil)
	if len(slices.Compact(got)) != benchFleet {
		b.Fatalf("broadcast.Discover found %d of %d", len(slices.Compact(got)), benchFleet)
	}
}

// BenchmarkFleet_Memory10000 reports the heap the fleet adds at 10,000 nodes, and the process
// RSS (which also holds the embedded broker and the test client).
func BenchmarkFleet_Memory10000(b *testing.B) {
	dir := b.TempDir()
	br, err := broker.Start(context.Background(), broker.Options{Dir: dir, Region: "eu"})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Stop()
	jwt, err := br.ProvisioningJWT(true)
	if err != nil {
		b.Fatal(err)
	}
	// Measured once: a stopped fleet stays reachable from its closing connections for a while,
	// so repeating the start in one process would count one fleet against another.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := Start(context.Background(), Config{BrokerURL: br.URL(), Region: "eu", Prefix: "emu-eu-", Count: benchFleet, Token: br.Token(), JWT: jwt})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Stop()
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / 1e6
	rss := readRSSMB(b)
	for range b.N {
		runtime.KeepAlive(f)
	}
	b.ReportMetric(heap, "fleet-heap-MB")
	b.ReportMetric(heap*1e6/benchFleet, "heap-B/node")
	b.ReportMetric(rss, "process-rss-MB")
	b.ReportMetric(0, "ns/op")
}

func readRSSMB(b *testing.B) float64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		b.Logf("no /proc/self/status: %v", err)
		return 0
	}
	defer fh.Close()
	s := bufio.NewScanner(fh)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkInventory_RoundTrip measures inventory against one emulated node of a 10,000-node
// fleet over a persistent connection: go-choria builds and signs each request, the time is from
// publish to the validated reply. p50/p99 are reported.
func BenchmarkInventory_RoundTrip(b *testing.B) {
	l := startLab(b, benchFleet, nil, nil)
	const identity = "bench-eu.mcollective"
	fw := l.framework(b, identity)
	tlsc, err := l.broker.ClientTLS(identity)
	if err != nil {
		b.Fatal(err)
	}
	nc, err := nats.Connect(l.broker.URL(), nats.Secure(tlsc), nats.UserInfo(broker.ProvisioningUser, l.broker.ProvisioningPassword()))
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	body, _ := json.Marshal(map[string]any{"agent": "rpcutil", "action": "inventory", "data": map[string]any{}})
	target := "emu-eu-04242"
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		data, replyTo := signedRequest(b, fw, "rpcutil", target, body, nil)
		sub, err := nc.SubscribeSync(replyTo)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := nc.Publish("provisioning.node."+target, data); err != nil {
			b.Fatal(err)
		}
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			b.Fatalf("no inventory reply: %v", err)
		}
		rep, err := fw.NewReplyFromTransportJSON(m.Data, false)
		if err != nil || rep.SenderID() != target {
			b.Fatalf("reply: %v", err)
		}
		lat = append(lat, time.Since(start))
		b.StopTimer()
		sub.Unsubscribe()
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}

// BenchmarkNode_InventoryServerSide is the fleet's own CPU for one inventory: decode the
// request, run the action, encode and publish the reply (no client, no wait).
func BenchmarkNode_InventoryServerSide(b *testing.B) {
	l := startLab(b, 10, nil, func(c *Config) { c.Recorder = nil })
	fw := l.framework(b, "bench-eu.mcollective")
	body, _ := json.Marshal(map[string]any{"agent": "rpcutil", "action": "inventory", "data": map[string]any{}})
	data, _ := signedRequest(b, fw, "rpcutil", "emu-eu-00003", body, nil)
	n := l.fleet.byID["emu-eu-00003"]
	nc := l.fleet.conns[0]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req, err := decodeRequest(data)
		if err != nil {
			b.Fatal(err)
		}
		l.fleet.deliverOne(nc, n, req, newMatcher(req.Filter, l.fleet.log))
	}
}

// BenchmarkNode_DiscoveryServerSide is the fleet's CPU per node for a broadcast discovery:
// one decode is shared by all nodes, so this is filter + encode + publish of one pong.
func BenchmarkNode_DiscoveryServerSide(b *testing.B) {
	l := startLab(b, 10, nil, nil)
	fw := l.framework(b, "bench-eu.mcollective")
	data, _ := signedRequest(b, fw, "discovery", "", []byte(base64.StdEncoding.EncodeToString([]byte("ping"))), nil)
	req, err := decodeRequest(data)
	if err != nil {
		b.Fatal(err)
	}
	req.Filter.AddAgentFilter("choria_provision")
	m := newMatcher(req.Filter, l.fleet.log)
	n := l.fleet.byID["emu-eu-00003"]
	nc := l.fleet.conns[0]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		l.fleet.deliverOne(nc, n, req, m)
	}
}

// BenchmarkDecodeRequest is the decode of one signed go-choria inventory request.
func BenchmarkDecodeRequest(b *testing.B) {
	l := startLab(b, 0, nil, nil)
	fw := l.framework(b, "bench-eu.mcollective")
	data, _ := signedRequest(b, fw, "rpcutil", "emu-eu-00003", []byte(`{"agent":"rpcutil","action":"inventory","data":{}}`), nil)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := decodeRequest(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInventory_GeneratedClient is inventory through go-choria's generated rpcutil client,
// as choria-provisioner calls it: each call opens its own TLS connections to the broker.
func BenchmarkInventory_GeneratedClient(b *testing.B) {
	l := startLab(b, benchFleet, nil, nil)
	fw := l.framework(b, "bench-eu.mcollective")
	rc := l.rpcutil(b, fw, "emu-eu-04242")
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := rc.Inventory().Do(context.Background())
		if err != nil || len(res.AllOutputs()) != 1 {
			b.Fatalf("inventory: %v", err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}
