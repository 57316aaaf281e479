// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"fmt"
	"strconv"
)

// Sizes are how large the report's runs are.
type Sizes struct {
	// Name is printed in the report's header.
	Name string
	// Labs are the emulated fleet sizes of the side-by-side runs.
	Labs []int
	// Ledger is BenchmarkLedgerScale's size ("1M") and LedgerNodes its node count.
	Ledger      string
	LedgerNodes int
	// Failovers is how many leader kills the failover figures are taken over.
	Failovers int
	// RegionNodes is the emulated nodes of each of BenchmarkTenRegions' ten regions.
	RegionNodes int
}

// FullSizes are the published figures' sizes.
func FullSizes() Sizes {
	return Sizes{Name: "full", Labs: []int{1000, 10000}, Ledger: "1M", LedgerNodes: 1_000_000, Failovers: 10, RegionNodes: 10_000}
}

// QuickSizes check the tooling in a few minutes; their figures are not the published ones.
func QuickSizes() Sizes {
	return Sizes{Name: "quick (tooling check, not the published figures)", Labs: []int{100}, Ledger: "10k", LedgerNodes: 10_000, Failovers: 2, RegionNodes: 100}
}

// ChoriaProvisionerUnset is what choria-provisioner's rows read when no binary of it was given.
const ChoriaProvisionerUnset = "not run: MUSTER_CHORIA_PROVISIONER_BIN unset"

// Plan is every table of the report: choriaProvisionerBin is choria-provisioner's binary, "" when
// there is none (its rows then read ChoriaProvisionerUnset).
func Plan(s Sizes, choriaProvisionerBin string) []Table {
	regions := tenRegions(s)
	return []Table{sideBySide(s, choriaProvisionerBin), clusterTable(), farEdgeTable(), regions[0], regions[1], failoverTable(s), ledgerTable(s)}
}

// sideBySide is muster-edge and choria-provisioner on the same fresh lab, one process per run
// (sandbox/edgebench).
func sideBySide(s Sizes, choriaProvisionerBin string) Table {
	t := Table{
		Title: "Muster against choria-provisioner",
		Note: "One provisioner process, 64 workers, against a fresh lab of emulated nodes (jwt, inventory, helper, " +
			"configure, restart); CPU is the provisioner's own, the helper's forks are counted apart.",
		Labels: []string{"provisioner", "helper", "nodes"},
		Columns: []Column{
			{Header: "nodes/min", Unit: "nodes/min"},
			{Header: "nodes/min vs choria-provisioner", Unit: "nodes/min", Ratio: true},
			{Header: "CPU ms/node", Unit: "cpu-ms/node", Digits: 2},
			{Header: "CPU/node vs choria-provisioner", Unit: "cpu-ms/node", Ratio: true},
			{Header: "helper CPU ms/node", Unit: "helper-cpu-ms/node", Digits: 2},
			{Header: "peak RSS MB", Unit: "rss-MB"},
			{Header: "wall s", Unit: "wall-s", Digits: 1},
		},
	}
	for _, n := range s.Labs {
		nodes := strconv.Itoa(n)
		baselineKey := "choria-provisioner/" + nodes
		baseline := Row{
			Key: baselineKey, Labels: []string{"choria-provisioner", "exec", nodes},
			Bench: "BenchmarkChoriaProvisioner/exec/" + nodes,
			Run:   edgebench("^BenchmarkChoriaProvisioner$", n, "MUSTER_CHORIA_PROVISIONER_BIN="+choriaProvisionerBin),
		}
		if choriaProvisionerBin == "" {
			baseline.NotRun = ChoriaProvisionerUnset
			baseline.Run.Env = []string{"MUSTER_CHORIA_PROVISIONER_BIN=/path/to/choria-provisioner", baseline.Run.Env[0]}
		}
		t.Rows = append(t.Rows, baseline)
		for _, helper := range []string{"exec", "persistent"} {
			t.Rows = append(t.Rows, Row{
				Key: "edge/" + helper + "/" + nodes, Labels: []string{"muster-edge", helper, nodes},
				Bench:    "BenchmarkEdge/" + helper + "/" + nodes,
				Run:      edgebench("^BenchmarkEdge$/^"+helper+"$", n),
				Baseline: baselineKey,
			})
		}
	}
	return t
}

// edgebench runs one lab size of sandbox/edgebench, once.
func edgebench(pattern string, nodes int, env ...string) Invocation {
	return Invocation{
		Module: "sandbox", Package: "./edgebench", Bench: pattern, BenchTime: "1x", Timeout: "30m",
		Env: append([]string{"MUSTER_BENCH_NODES=" + strconv.Itoa(nodes)}, env...),
	}
}

// clusterTable is one in-process edge, standalone and then against three coordinator processes
// (sandbox/clustersuite); both rows come from one run.
func clusterTable() Table {
	run := Invocation{Module: "sandbox", Package: "./clustersuite", Bench: "^BenchmarkClusterEdge$", BenchTime: "1x", Timeout: "30m"}
	return Table{
		Title: "Cluster against standalone",
		Note: "One edge, 64 workers, batches of 256, the persistent sample helper, on a fresh lab of 1,000 emulated " +
			"nodes; from the edge's start to its 1,000th provisioned node.",
		Labels: []string{"edge", "nodes"},
		Columns: []Column{
			{Header: "nodes/min", Unit: "nodes/min"},
			{Header: "vs standalone", Unit: "nodes/min", Ratio: true},
		},
		Rows: []Row{
			{Key: "cluster/standalone", Labels: []string{"standalone", "1000"}, Bench: "BenchmarkClusterEdge/standalone", Run: run},
			{Key: "cluster/cluster", Labels: []string{"cluster (3 coordinators)", "1000"}, Bench: "BenchmarkClusterEdge/cluster", Run: run, Baseline: "cluster/standalone"},
		},
	}
}

// farEdgeTable is one edge next to the coordinators and one 150 ms from all of them, three labs
// each (sandbox/clustersuite).
func farEdgeTable() Table {
	return Table{
		Title: "An edge far from the coordinators",
		Note: "One cluster-mode edge on a fresh lab of 1,000 emulated nodes (64 workers, batches of 256, the persistent helper), " +
			"next to three coordinator processes and then behind a 150 ms round trip (jitter included) to every one of them, " +
			"three labs each; grant is an acquire less the leader's hold, report the whole call; rtt is in round trips.",
		Labels: []string{"edge"},
		Columns: []Column{
			{Header: "near nodes/min", Unit: "near-nodes/min"},
			{Header: "far nodes/min", Unit: "far-nodes/min"},
			{Header: "far/near", Unit: "far/near", Digits: 2},
			{Header: "grant p50 ms", Unit: "grant-p50-ms", Digits: 1},
			{Header: "grant p99 ms", Unit: "grant-p99-ms", Digits: 1},
			{Header: "grant p99 rtt", Unit: "grant-p99-rtt", Digits: 2},
			{Header: "report p50 ms", Unit: "report-p50-ms", Digits: 1},
			{Header: "report p99 ms", Unit: "report-p99-ms", Digits: 1},
			{Header: "report p99 rtt", Unit: "report-p99-rtt", Digits: 2},
		},
		Rows: []Row{{
			Key: "far-edge", Labels: []string{"150 ms from every member (far-region)"}, Bench: "BenchmarkFarEdge",
			Run: Invocation{Module: "sandbox", Package: "./clustersuite", Bench: "^BenchmarkFarEdge$", BenchTime: "3x", Timeout: "30m"},
		}},
	}
}

// tenRegions is the two tables of one BenchmarkTenRegions run (sandbox/regionbench): its rates
// and costs, then its latencies and the leader's kill.
func tenRegions(s Sizes) [2]Table {
	run := Invocation{
		Module: "sandbox", Package: "./regionbench", Bench: "^BenchmarkTenRegions$", BenchTime: "1x", Timeout: "90m",
		Env: []string{"MUSTER_BENCH_NODES=" + strconv.Itoa(s.RegionNodes)},
	}
	label := fmt.Sprintf("10 regions x %s nodes", groupDigits(strconv.Itoa(s.RegionNodes)))
	row := func(key string) []Row {
		return []Row{{Key: key, Labels: []string{label}, Bench: "BenchmarkTenRegions", Run: run}}
	}
	return [2]Table{{
		Title: "Ten regions at once",
		Note: "One in-process edge per region (64 workers, batches of 256, the persistent helper), ten standalone and then " +
			"against three coordinator processes with fsync, 20, 40 and 80 ms apart (3dc), each edge next to one; " +
			"the lab, the edges and the links' proxies run on half the CPUs in both runs and the coordinators on the " +
			"other half, as machines of their own (MUSTER_BENCH_PLACEMENT=split, the default; shared puts every process " +
			"on every CPU); nodes/min from the edges' start to the last node; busy is the share of the 640 workers " +
			"running a flow; CPU and RSS are the coordinator processes' own.",
		Labels: []string{"fleet"},
		Columns: []Column{
			{Header: "standalone nodes/min", Unit: "standalone-nodes/min"},
			{Header: "cluster nodes/min", Unit: "cluster-nodes/min"},
			{Header: "cluster/standalone", Unit: "cluster/standalone", Digits: 2},
			{Header: "standalone busy", Unit: "standalone-busy", Digits: 3},
			{Header: "cluster busy", Unit: "cluster-busy", Digits: 3},
			{Header: "coordinators CPU ms/node", Unit: "coord-cpu-ms/node", Digits: 3},
			{Header: "leader CPU ms/node", Unit: "leader-cpu-ms/node", Digits: 3},
			{Header: "leader peak RSS MB", Unit: "leader-rss-MB"},
		},
		Rows: row("regions"),
	}, {
		Title: "Ten regions: latency and a leader's SIGKILL",
		Note: "The same run: grant and report latency as the ten edges saw them (grant less the leader's hold), the log " +
			"entries the leader proposed and the ledger transactions that applied them, how long a provisioning host flow took in each run and an intent in the cluster " +
			"edges' journal, then the whole fleet again with the leader SIGKILLed when half of it was provisioned.",
		Labels: []string{"fleet"},
		Columns: []Column{
			{Header: "grant p50 ms", Unit: "grant-p50-ms", Digits: 1},
			{Header: "grant p99 ms", Unit: "grant-p99-ms", Digits: 1},
			{Header: "report p50 ms", Unit: "report-p50-ms", Digits: 1},
			{Header: "report p99 ms", Unit: "report-p99-ms", Digits: 1},
			{Header: "nodes per grant", Unit: "nodes/grant", Digits: 1},
			{Header: "nodes per report", Unit: "nodes/report", Digits: 1},
			{Header: "log entries per 1,000 nodes", Unit: "entries/1000-nodes", Digits: 1},
			{Header: "ledger commits per 1,000 nodes", Unit: "ledger-commits/1000-nodes", Digits: 1},
			{Header: "standalone flow p50 ms", Unit: "standalone-flow-p50-ms", Digits: 1},
			{Header: "cluster flow p50 ms", Unit: "cluster-flow-p50-ms", Digits: 1},
			{Header: "edge journal mean ms", Unit: "cluster-journal-mean-ms", Digits: 1},
			{Header: "nodes/min with the kill", Unit: "killed-nodes/min"},
			{Header: "SIGKILL to next grant s", Unit: "kill-stall-s", Digits: 2},
			{Header: "read gone", Unit: "gone"},
			{Header: "double provisioned", Unit: "double"},
		},
		Rows: row("regions-latency"),
	}}
}

// failoverTable is the stall an edge sees when the coordinators' leader is killed.
func failoverTable(s Sizes) Table {
	return Table{
		Title: "Failover stall",
		Note: "Three muster-coordinator processes on loopback with the default raft timeouts; the leader gets SIGKILL " +
			"and an edge's client asks for a lease until one is granted; the killed member restarts before the next kill.",
		Labels: []string{"measure"},
		Columns: []Column{
			{Header: "median s", Unit: "failover-median-s", Digits: 2},
			{Header: "p90 s", Unit: "failover-p90-s", Digits: 2},
			{Header: "max s", Unit: "failover-max-s", Digits: 2},
		},
		Rows: []Row{{
			Key:    "failover",
			Labels: []string{fmt.Sprintf("SIGKILL of the leader to the next lease granted (%d kills)", s.Failovers)},
			Bench:  "BenchmarkFailover_SIGKILLToNextGrantedLease",
			Run: Invocation{
				Module: "coordinator", Package: "./cmd/muster-coordinator", Bench: "^BenchmarkFailover_SIGKILLToNextGrantedLease$",
				BenchTime: fmt.Sprintf("%dx", s.Failovers), Timeout: "30m",
			},
		}},
	}
}

// ledgerTable is the ledger FSM (bbolt, fsync on) at s.LedgerNodes nodes in 10 regions; every row
// comes from one run, which builds the ledger once.
func ledgerTable(s Sizes) Table {
	run := Invocation{
		Module: "coordinator", Package: "./ledger", Bench: "^BenchmarkLedgerScale$/^" + s.Ledger + "$",
		// 5 rounds give 50 samples of each latency and keep the 1,000,000-node run's snapshots
		// and restores within the report's half hour.
		BenchTime: "5x", Timeout: "60m",
	}
	bench := "BenchmarkLedgerScale/" + s.Ledger + "/"
	row := func(sub, label string) Row {
		return Row{Key: "ledger/" + sub, Labels: []string{label}, Bench: bench + sub, Run: run}
	}
	return Table{
		Title: fmt.Sprintf("The ledger at %s nodes", groupDigits(strconv.Itoa(s.LedgerNodes))),
		Note: "The ledger's apply path (one bbolt transaction per command, fsync on) without raft, nodes spread over " +
			"10 regions; a grant takes 1,000 nodes, as the lease manager does by default.",
		Labels: []string{"operation"},
		Columns: []Column{
			{Header: "ms/op", Unit: "ns/op", Scale: 1e-6, Digits: 2},
			{Header: "grant p50 ms", Unit: "grant-p50-ms", Digits: 1},
			{Header: "grant p99 ms", Unit: "grant-p99-ms", Digits: 1},
			{Header: "report p50 ms", Unit: "report-p50-ms", Digits: 1},
			{Header: "report p99 ms", Unit: "report-p99-ms", Digits: 1},
			{Header: "snapshot MB", Unit: "snapshot-MB"},
			{Header: "RSS MB", Unit: "rss-MB"},
			{Header: "of it anonymous MB", Unit: "rss-anon-MB"},
		},
		Rows: []Row{
			row("grant+report", "a grant of 1,000 nodes and its report, in each region (one op: 10 of each)"),
			row("snapshot", "a snapshot, persisted into raft's file store"),
			row("restore", "that snapshot restored into another member's ledger"),
			row("nodes-filtered", "a filtered page of nodes that matches none"),
			row("grant-while-locked-to-another-edge", "a grant finding a whole region locked to another edge"),
		},
	}
}
