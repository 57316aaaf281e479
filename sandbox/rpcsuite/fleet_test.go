// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"
	"github.com/choria-io/go-choria/inter"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/sandbox/broker"
	"github.com/seed96588659/muster/sandbox/emulated"
	"github.com/seed96588659/muster/sandbox/faults"
)

// Nodes of the shared emulated fleet and how each misbehaves.
const (
	nodeHealthy    = "emu-00000"
	nodeSilent     = "emu-00001"
	nodeDuplicate  = "emu-00002"
	nodeJWTFails   = "emu-00003"
	nodeShutdownNo = "emu-00004"
	nodeContended  = "emu-00005"
	nodePause      = "emu-00006"
	nodeBench      = "emu-00008"
	nodeShutdownOK = "emu-00009"
	nodeFlowConn   = "emu-00010"
	nodeFlowCall   = "emu-00011"
	nodeUpgrade    = "emu-00012"
	fleetSize      = 13
)

// suite is one broker and one emulated fleet shared by every test of the package.
type suite struct {
	broker *broker.Broker
	fleet  *emulated.Fleet
}

var lab *suite

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	dir, err := os.MkdirTemp("", "muster-rpcsuite-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	b, err := broker.Start(ctx, broker.Options{Dir: dir, Region: "eu"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start broker:", err)
		return 1
	}
	defer b.Stop()

	jwt, err := b.ProvisioningJWT(true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "provisioning jwt:", err)
		return 1
	}
	fleet, err := emulated.Start(ctx, emulated.Config{
		BrokerURL: b.URL(),
		Region:    "eu",
		Prefix:    "emu-",
		Count:     fleetSize,
		Token:     b.Token(),
		JWT:       jwt,
		Version:   "0.29.4",
		Faults: faults.NewSet(
			faults.Rule{Select: faults.Selector{Identity: nodeSilent}, Fault: faults.Fault{Silent: true}},
			faults.Rule{Select: faults.Selector{Identity: nodeDuplicate}, Fault: faults.Fault{Duplicate: true}},
			faults.Rule{Select: faults.Selector{Identity: nodeJWTFails}, Fault: faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#jwt", Times: 1 << 30, Message: "jwt store broken"}}}},
			faults.Rule{Select: faults.Selector{Identity: nodeShutdownNo}, Fault: faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#shutdown", Times: 1 << 30, Message: "cannot stop"}}}},
		),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start emulated fleet:", err)
		return 1
	}
	defer fleet.Stop()

	lab = &suite{broker: b, fleet: fleet}
	return m.Run()
}

// caller is one edge identity with both transports and its own metrics.
type caller struct {
	fw      inter.Framework
	conn    *rpc.Conn
	percall *rpc.PerCall
	wrapper *rpc.Wrapper
	metrics *metrics.Registry
}

// newCaller connects identity to the suite's broker; replies are awaited for timeout per attempt.
func newCaller(t testing.TB, identity string, timeout time.Duration) *caller {
	t.Helper()
	fw, err := lab.broker.ClientFramework(identity)
	if err != nil {
		t.Fatalf("client framework for %s: %v", identity, err)
	}
	conn, err := rpc.Dial(context.Background(), fw, rpc.ConnOptions{Timeout: timeout, DuplicateGrace: 250 * time.Millisecond})
	if err != nil {
		t.Fatalf("dial as %s: %v", identity, err)
	}
	t.Cleanup(func() { conn.Close() })
	percall, err := rpc.NewPerCall(fw, timeout)
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.New()
	w, err := rpc.NewWrapper(rpc.WrapperOptions{Site: "eu", Metrics: reg, Policy: backoff.Policy{Millis: []int{20}}})
	if err != nil {
		t.Fatal(err)
	}
	return &caller{fw: fw, conn: conn, percall: percall, wrapper: w, metrics: reg}
}

func (c *caller) node(t rpc.Transport, identity string, pause rpc.PauseSource) *rpc.Node {
	if pause == nil {
		pause = rpc.PauseFunc(func() bool { return false })
	}
	return rpc.NewNode(c.wrapper, t, identity, lab.broker.Token(), pause)
}

// attempts is how many attempts of rpc were timed.
func (c *caller) attempts(t testing.TB, action string) uint64 {
	t.Helper()
	families, err := c.metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "choria_provisioner_rpc_time" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "rpc" && l.GetValue() == action {
					return m.GetSummary().GetSampleCount()
				}
			}
		}
	}
	return 0
}
