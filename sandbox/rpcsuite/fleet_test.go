// SPDX-License-Identifier: Apache-2.0

package rpcsuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"
	"github.com/choria-io/go-choria/inter"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// Nodes of the shared lab and how each misbehaves.
var (
	nodeSilent     = emu(1)
	nodeDuplicate  = emu(2)
	nodeJWTFails   = emu(3)
	nodeShutdownNo = emu(4)
	nodeContended  = emu(5)
	nodePause      = emu(6)
	nodeBench      = emu(8)
	nodeShutdownOK = emu(9)
	nodeFlowConn   = emu(10)
	nodeFlowCall   = emu(11)
	nodeUpgrade    = emu(12)
	nodeSlowUpdate = emu(13)

	realFlowConn = lab.RealIdentity(region, 1)
	realFlowCall = lab.RealIdentity(region, 2)
	realUpgrade  = lab.RealIdentity(region, 3)
	realBench    = lab.RealIdentity(region, 4)
)

const (
	slowUpdateDelay = 11 * time.Second

	region    = "eu"
	fleetSize = 14
)

func emu(i int) string { return fmt.Sprintf("%s%05d", lab.EmulatedPrefix(region), i) }

// shared is one lab (broker, 4 real node processes, an emulated fleet) for the whole package.
var shared *lab.Lab

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

	ctx := context.Background()
	bin, err := lab.BuildNodeBinary(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build node binary:", err)
		return 1
	}
	shared, err = lab.Start(ctx, lab.Options{
		Dir:         filepath.Join(dir, "lab"),
		Regions:     []string{region},
		Real:        4,
		Emulated:    fleetSize,
		NodeBinary:  bin,
		BaseVersion: "0.29.4",
		Faults: faults.NewSet(
			faults.Rule{Select: faults.Selector{Identity: nodeSilent}, Fault: faults.Fault{Silent: true}},
			faults.Rule{Select: faults.Selector{Identity: nodeDuplicate}, Fault: faults.Fault{Duplicate: true}},
			faults.Rule{Select: faults.Selector{Identity: nodeJWTFails}, Fault: faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#jwt", Times: 1 << 30, Message: "jwt store broken"}}}},
			faults.Rule{Select: faults.Selector{Identity: nodeShutdownNo}, Fault: faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#shutdown", Times: 1 << 30, Message: "cannot stop"}}}},
			// Unpacking a release takes a real agent up to its 20 s agent timeout; 11 s is past
			// a flat 10 s reply window and well inside go-choria's.
			faults.Rule{Select: faults.Selector{Identity: nodeSlowUpdate}, Fault: faults.Fault{Delay: slowUpdateDelay, DelayActions: []string{"choria_provision#release_update"}}},
		),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start lab:", err)
		return 1
	}
	defer shared.Stop()
	if failed := shared.Region(region).Failed(); len(failed) > 0 {
		fmt.Fprintln(os.Stderr, "lab nodes failed to start:", failed)
		return 1
	}

	return m.Run()
}

// caller is one edge identity with both transports and its own metrics.
type caller struct {
	identity string
	fw       inter.Framework
	conn     *rpc.Conn
	percall  *rpc.PerCall
	wrapper  *rpc.Wrapper
	metrics  *metrics.Registry
}

// newCaller connects identity to the suite's broker; replies are awaited for timeout per attempt.
func newCaller(t testing.TB, identity string, timeout time.Duration) *caller {
	t.Helper()
	fw, err := shared.Region(region).Framework(identity)
	if err != nil {
		t.Fatalf("client framework for %s: %v", identity, err)
	}
	c := &caller{identity: identity, fw: fw, metrics: metrics.New()}
	c.conn = c.dial(t, rpc.ConnOptions{Timeout: timeout})
	if c.percall, err = rpc.NewPerCall(fw, timeout); err != nil {
		t.Fatal(err)
	}
	if c.wrapper, err = rpc.NewWrapper(rpc.WrapperOptions{Site: "eu", Metrics: c.metrics, Policy: backoff.Policy{Millis: []int{20}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// dial opens a Conn of the caller's own, closed when the test ends.
func (c *caller) dial(t testing.TB, opts rpc.ConnOptions) *rpc.Conn {
	t.Helper()
	conn, err := rpc.Dial(context.Background(), c.fw, opts)
	if err != nil {
		t.Fatalf("dial as %s: %v", c.identity, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func (c *caller) node(t rpc.Transport, identity string, pause rpc.PauseSource) *rpc.Node {
	if pause == nil {
		pause = rpc.PauseFunc(func() bool { return false })
	}
	return rpc.NewNode(c.wrapper, t, identity, token(), pause)
}

// token is the region's provisioning token.
func token() string { return shared.Region(region).Broker().Token() }
