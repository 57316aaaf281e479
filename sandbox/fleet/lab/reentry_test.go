// SPDX-License-Identifier: Apache-2.0

package lab_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/audit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/realnode"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// TestLab_RealNodesRebuiltAndFlapping: real go-choria nodes come back in provisioning mode after
// their provisioning, a rebuilt one as a new machine (its keys gone), a flapping one as the same
// machine (its keys kept), as often as their faults say.
func TestLab_RealNodesRebuiltAndFlapping(t *testing.T) {
	rebuilt, flapping := lab.RealIdentity(region, 1), lab.RealIdentity(region, 2)
	l, err := lab.Start(context.Background(), lab.Options{
		Dir: filepath.Join(t.TempDir(), "lab"), Regions: []string{region}, Real: 2, NodeBinary: nodeBinary,
		// index selects emulated nodes only: it must not reach real node 1
		Faults: faults.NewSet(
			faults.Rule{Select: faults.Selector{Identity: rebuilt}, Fault: faults.Fault{Rebuilt: &faults.Reentry{After: 200 * time.Millisecond, Times: 1}}},
			faults.Rule{Select: faults.Selector{Glob: "real-*-2"}, Fault: faults.Fault{Flapping: &faults.Reentry{After: 200 * time.Millisecond, Times: 2}}},
			faults.Rule{Select: faults.Selector{HasIndex: true, From: 0, To: 9}, Fault: faults.Fault{Flapping: &faults.Reentry{After: time.Second, Times: 9}}},
		),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Stop() })
	r := l.Region(region)
	if f := r.Failed(); len(f) > 0 {
		t.Fatalf("nodes failed: %v", f)
	}
	fw, err := r.Framework(lab.ClientIdentity(region, 1))
	if err != nil {
		t.Fatal(err)
	}
	fw.Configuration().DiscoveryTimeout = 20
	token := r.Broker().Token()
	// each call and wait gets its own time: a loaded machine slows every restart
	step := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		t.Cleanup(cancel)
		return ctx
	}

	// provision runs gencsr, configure and restart, and waits until the node runs provisioned.
	provision := func(node string) {
		t.Helper()
		pc := provisionClient(t, fw, node)
		ctx := step()
		csr, err := pc.Gencsr(token).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, msg := one(t, node, csr.AllOutputs()); !ok {
			t.Fatalf("gencsr %s: %s", node, msg)
		}
		cfg, err := r.ProvisionedConfig(node)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(cfg)
		conf, err := pc.Configure(string(body)).Token(token).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, msg := one(t, node, conf.AllOutputs()); !ok {
			t.Fatalf("configure %s: %s", node, msg)
		}
		rs, err := pc.Restart(token).Splay(1).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, msg := one(t, node, rs.AllOutputs()); !ok {
			t.Fatalf("restart %s: %s", node, msg)
		}
	}
	// A node's process starts: 1 in provisioning mode, 2 provisioned, 3 back in provisioning
	// mode, 4 provisioned, ... Only states that last until the test acts are waited for: a
	// provisioned node with a re-entry left is back in provisioning mode 200 ms later.
	at := func(node string, starts int, provisioning bool) realnode.Status {
		t.Helper()
		st, err := r.WaitNodeStatus(step(), node, func(s realnode.Status) bool {
			return s.Starts == starts && s.Provisioning == provisioning && s.Connected
		})
		if err != nil {
			t.Fatalf("%s not at start %d with provisioning %v: %v", node, starts, provisioning, err)
		}
		return st
	}
	key := func(node string) bool {
		_, err := os.Stat(filepath.Join(r.NodeDir(node), "ssl", "private.pem"))
		return err == nil
	}

	provision(rebuilt)
	provision(flapping)
	at(rebuilt, 3, true)
	if key(rebuilt) {
		t.Fatalf("the rebuilt node kept the key its first life made")
	}
	provision(rebuilt)
	for k := 1; k <= 2; k++ {
		at(flapping, 2*k+1, true)
		if !key(flapping) {
			t.Fatalf("the flapping node lost its key at flap %d", k)
		}
		provision(flapping)
	}
	at(rebuilt, 4, false)
	at(flapping, 6, false)
	// Their supervisors are done: Times reached. Stop waits for them, so the log is complete.
	if err := l.Stop(); err != nil {
		t.Fatal(err)
	}
	acts, err := recorder.ReadFile(l.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	rep := audit.Build(acts)
	if len(rep.DoubleProvisioned) > 0 {
		t.Fatalf("double provisioned: %+v", rep.DoubleProvisioned)
	}
	for node, lives := range map[string]int{rebuilt: 2, flapping: 3} {
		var incs []int
		for _, a := range acts {
			if a.Node == node && a.Action == audit.Restart && a.OK {
				incs = append(incs, a.Incarnation)
			}
		}
		if len(incs) != lives || slices.Contains(incs, 0) || !slices.IsSorted(incs) || len(slices.Compact(slices.Clone(incs))) != lives {
			t.Errorf("%s: accepted restarts in incarnations %v, want %d distinct lives", node, incs, lives)
		}
		if n := rep.Nodes[node]; n == nil || n.Episodes != lives || !n.Provisioned {
			t.Errorf("%s in the report: %+v, want %d episodes ending provisioned", node, n, lives)
		}
	}
}
