// SPDX-License-Identifier: Apache-2.0

// Package emulated runs thousands of Choria servers in provisioning mode inside one process.
// They speak Choria protocol version 1 on the region's provisioning broker through a few shared
// NATS connections: a request is decoded once (transport -> secure request -> request) and
// handed to every node it addresses; each node answers with its own reply -> secure reply ->
// transport. Nodes answer discovery, rpcutil and choria_provision with the real agents'
// semantics (see provision.go) and misbehave as their faults say.
package emulated

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/choria-io/go-choria/lifecycle"
	"github.com/nats-io/nats.go"

	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// Fleet is a running set of emulated nodes for one region.
type Fleet struct {
	cfg         Config
	log         *slog.Logger
	allowUpdate bool
	nodes       []*node
	byID        map[string]*node
	keys        *keyPool
	verifier    *verifier
	http        *http.Client

	ctx    context.Context
	cancel context.CancelFunc
	conns  []*nats.Conn

	// mu orders every wg.Add before Stop's Wait: nats.Conn.Close does not wait for a handler
	// already running, so a handler may still try to start work after Stop began.
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup

	stopOnce sync.Once

	requests    atomic.Int64
	replies     atomic.Int64
	invalid     atomic.Int64
	configured  atomic.Int64
	provisioned atomic.Int64
	reentered   atomic.Int64
}

// Stats are counters of a running fleet.
type Stats struct {
	// Requests is how many requests the fleet decoded (one per broadcast, not per node).
	Requests int64
	// Replies is how many replies nodes published.
	Replies int64
	// Invalid is how many messages could not be decoded, verified, or were past their TTL.
	Invalid int64
	// Configured is how many configure requests nodes accepted. It leads Provisioned by the
	// restart splay, so it is the measure of how far a batch of work has got.
	Configured int64
	// Provisioned is how many nodes restarted out of provisioning mode.
	Provisioned int64
	// Reentered is how many times provisioned nodes came back in provisioning mode by their
	// rebuilt or flapping fault.
	Reentered int64
}

// Start connects the fleet to its broker, subscribes and announces every node's startup.
func Start(ctx context.Context, cfg Config) (*Fleet, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	allow, err := jwtAllowsUpdate(cfg.JWT)
	if err != nil {
		return nil, fmt.Errorf("emulated fleet %s: %w", cfg.Region, err)
	}
	f := &Fleet{
		cfg:         cfg,
		log:         cfg.Logger.With("component", "emulated", "region", cfg.Region),
		allowUpdate: allow,
		byID:        make(map[string]*node, cfg.Count),
		keys:        newKeyPool(cfg.CSRKeys),
		http:        &http.Client{Timeout: 10 * time.Second},
	}
	if cfg.CallerCA != nil {
		f.verifier = newVerifier(cfg.CallerCA)
	}
	for i := range cfg.Count {
		id := fmt.Sprintf("%s%05d", cfg.Prefix, i)
		fault := cfg.Faults.For(cfg.Region, id, i)
		n, err := newNode(f, i, id, fault)
		if err != nil {
			return nil, err
		}
		if fault.Duplicate {
			twinFault := fault
			twinFault.Duplicate = false
			if n.twin, err = newNode(f, i, id, twinFault); err != nil {
				return nil, err
			}
		}
		f.nodes = append(f.nodes, n)
		f.byID[id] = n
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	if err := f.connect(ctx); err != nil {
		f.cancel()
		f.closeConns()
		return nil, err
	}
	for _, n := range f.nodes {
		for t := n; t != nil; t = t.twin {
			if !t.fault.Silent {
				f.publishEvent(t, lifecycle.Startup, t.version)
			}
		}
	}
	for _, nc := range f.conns {
		if err := nc.Flush(); err != nil {
			f.Stop()
			return nil, fmt.Errorf("emulated fleet %s: flush startup events: %w", cfg.Region, err)
		}
	}
	f.log.Info("emulated fleet started", "nodes", cfg.Count, "broker", cfg.BrokerURL, "connections", len(f.conns))
	return f, nil
}

// subjects every provisioning-mode server subscribes to, as the broker's permissions allow.
func subjects() []string {
	return []string{
		"provisioning.node.>",
		"provisioning.broadcast.agent.discovery",
		"provisioning.broadcast.agent.rpcutil",
		"provisioning.broadcast.agent.choria_provision",
	}
}

func (f *Fleet) connect(ctx context.Context) error {
	queue := ""
	if f.cfg.Connections > 1 {
		queue = "emulated_" + f.cfg.Region + "_" + strings.TrimSuffix(f.cfg.Prefix, "-")
	}
	for i := range f.cfg.Connections {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("emulated fleet %s: connect: %w", f.cfg.Region, err)
		}
		name := fmt.Sprintf("emulated-%s-%d", f.cfg.Region, i)
		nc, err := nats.Connect(f.cfg.BrokerURL,
			nats.Name(name),
			nats.Secure(f.cfg.TLS),
			nats.Token(f.cfg.JWT),
			nats.MaxReconnects(-1),
			nats.ReconnectWait(500*time.Millisecond),
			nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
				f.log.Error("nats error", "connection", name, "error", err)
			}),
		)
		if err != nil {
			return fmt.Errorf("emulated fleet %s: connect %s: %w", f.cfg.Region, f.cfg.BrokerURL, err)
		}
		f.conns = append(f.conns, nc)
		for _, subj := range subjects() {
			var sub *nats.Subscription
			handler := f.handler(nc)
			if queue == "" {
				sub, err = nc.Subscribe(subj, handler)
			} else {
				sub, err = nc.QueueSubscribe(subj, queue, handler)
			}
			if err != nil {
				return fmt.Errorf("emulated fleet %s: subscribe %s: %w", f.cfg.Region, subj, err)
			}
			if err := sub.SetPendingLimits(-1, 256<<20); err != nil {
				return fmt.Errorf("emulated fleet %s: pending limits %s: %w", f.cfg.Region, subj, err)
			}
		}
		// A denied subscription only shows up as an async error; a round trip surfaces it.
		if err := nc.FlushTimeout(10 * time.Second); err != nil {
			return fmt.Errorf("emulated fleet %s: flush subscriptions: %w", f.cfg.Region, err)
		}
		if err := nc.LastError(); err != nil {
			return fmt.Errorf("emulated fleet %s: broker refused: %w", f.cfg.Region, err)
		}
	}
	return nil
}

// Identities lists the fleet's node identities in index order (a duplicated identity once).
func (f *Fleet) Identities() []string {
	out := make([]string, len(f.nodes))
	for i, n := range f.nodes {
		out[i] = n.identity
	}
	return out
}

// Stats returns the fleet's counters.
func (f *Fleet) Stats() Stats {
	return Stats{
		Requests: f.requests.Load(), Replies: f.replies.Load(),
		Invalid: f.invalid.Load(), Configured: f.configured.Load(), Provisioned: f.provisioned.Load(),
		Reentered: f.reentered.Load(),
	}
}

// NodeState is what a test or report may want to know about one node.
type NodeState struct {
	Identity string
	// Mode is provisioning, away, provisioned or shutdown.
	Mode       string
	Version    string
	Upgradable bool
	// LockedBy is "sender.caller" of the current provisioning lock holder, empty when unlocked.
	LockedBy string
	// Config is the configuration the last successful configure wrote.
	Config map[string]string
	// Incarnation counts the node's lives in provisioning mode, from 1 (see recorder.Action).
	Incarnation int
	// Reentries is how often the node came back in provisioning mode by its rebuilt or flapping
	// fault (since Reenter armed it, when it did).
	Reentries int
}

// State reports a node's state (of the first of two twins).
func (f *Fleet) State(identity string) (NodeState, bool) {
	n, ok := f.byID[identity]
	if !ok {
		return NodeState{}, false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	st := NodeState{Identity: n.identity, Mode: n.mode.String(), Version: n.version, Upgradable: n.upgradable, Config: maps.Clone(n.config),
		Incarnation: int(n.incarnation.Load()), Reentries: n.reentries}
	if f.cfg.Now().Before(n.lockedUntil) {
		st.LockedBy = n.lockedBy
	}
	return st, true
}

// Reprovision brings a node that left provisioning mode back into it, fresh, as an operator
// re-enabling provisioning on a server would.
func (f *Fleet) Reprovision(identity string) error {
	n, ok := f.byID[identity]
	if !ok {
		return fmt.Errorf("reprovision %s: no such emulated node", identity)
	}
	for t := n; t != nil; t = t.twin {
		t.mu.Lock()
		if t.mode == modeProvisioning {
			t.mu.Unlock()
			continue
		}
		version := t.version
		if err := t.reset(); err != nil {
			t.mu.Unlock()
			return fmt.Errorf("reprovision %s: %w", identity, err)
		}
		t.version = version
		t.mu.Unlock()
		f.publishEvent(t, lifecycle.Startup, version)
	}
	return nil
}

// Reenter gives a running node (and its twin) a rebuilt or flapping fault from now on, as if
// the lab had started with it: after its next provisioning restart it comes back in
// provisioning mode, at most its Times times counted from now. fault must set Rebuilt or
// Flapping; its other fields are ignored (a running node's faults are fixed at start).
func (f *Fleet) Reenter(identity string, fault faults.Fault) error {
	re := newReentry(fault)
	switch {
	case re == nil:
		return fmt.Errorf("reenter %s: the fault is neither rebuilt nor flapping", identity)
	case re.Times < 1 || re.After <= 0:
		return fmt.Errorf("reenter %s: want a positive delay and count, got %s and %d", identity, re.After, re.Times)
	}
	n, ok := f.byID[identity]
	if !ok {
		return fmt.Errorf("reenter %s: no such emulated node", identity)
	}
	for t := n; t != nil; t = t.twin {
		t.mu.Lock()
		r := *re
		t.reentry, t.reentries = &r, 0
		t.mu.Unlock()
	}
	return nil
}

// Stop closes the fleet's connections; nodes stop answering at once. It is safe to call twice.
// The error is always nil (closing a NATS connection cannot fail); it keeps Stop's shape
// alike across the sandbox's parts.
func (f *Fleet) Stop() error {
	f.stopOnce.Do(func() {
		f.mu.Lock()
		f.stopped = true
		f.mu.Unlock()
		f.cancel()
		f.closeConns()
		f.wg.Wait()
		f.log.Info("emulated fleet stopped", "replies", f.replies.Load())
	})
	return nil
}

func (f *Fleet) closeConns() {
	for _, nc := range f.conns {
		nc.Close()
	}
}

// enter counts one piece of work Stop must wait for; false once Stop has begun.
func (f *Fleet) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	f.wg.Add(1)
	return true
}

// spawn runs fn in its own goroutine unless the fleet has stopped.
func (f *Fleet) spawn(fn func()) {
	if !f.enter() {
		return
	}
	go func() {
		defer f.wg.Done()
		fn()
	}()
}

// after runs fn after d unless the fleet has stopped by then.
func (f *Fleet) after(d time.Duration, fn func()) {
	time.AfterFunc(d, func() {
		if !f.enter() {
			return
		}
		defer f.wg.Done()
		fn()
	})
}

// scale applies TimeScale to a real agent's delay.
func (f *Fleet) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * f.cfg.TimeScale)
}

// record sends one action to the recorder, if any.
func (f *Fleet) record(n *node, req *request, ok bool, errText string, at time.Time) {
	if f.cfg.Recorder == nil {
		return
	}
	f.cfg.Recorder.Record(recorder.Action{
		Time: at, Region: f.cfg.Region, Node: n.identity, Action: req.Agent + "#" + req.Action,
		Caller: req.Caller, OK: ok, Error: errText, Incarnation: int(n.incarnation.Load()),
	})
}
