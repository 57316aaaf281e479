// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// shortLeases is the standalone source with leases that run out: each grant lasts ttl and no
// renewal is accepted, so every lease ends ttl after its grant whatever the broker does. It
// keeps, per node, when each of its leases began and ended as the source counts them.
type shortLeases struct {
	lease.Source
	ttl time.Duration

	mu      sync.Mutex
	windows map[string][]leaseWindow
}

// leaseWindow is one lease of a node: from before its acquire to its end at the source.
type leaseWindow struct {
	id       string
	from, to time.Time
}

func (s *shortLeases) Acquire(ctx context.Context, max int, wait time.Duration) (lease.Grant, error) {
	from := time.Now()
	g, err := s.Source.Acquire(ctx, max, wait)
	if err != nil || g.Lease == nil {
		return g, err
	}
	// Counted from the answer: the edge counts from before its call, so its count ends first.
	to := time.Now().Add(s.ttl)
	g.Lease.TTL = api.Duration(s.ttl)
	s.mu.Lock()
	for _, id := range g.Lease.Nodes {
		s.windows[id] = append(s.windows[id], leaseWindow{id: g.Lease.ID, from: from, to: to})
	}
	s.mu.Unlock()
	return g, nil
}

func (s *shortLeases) Renew(_ context.Context, l api.Lease) (lease.Grant, error) {
	return lease.Grant{}, fmt.Errorf("short lease %s is never renewed: %w", l.ID, lease.ErrLeaseGone)
}

// outside is every action the record shows a node received outside all of its leases, and
// the least time any action left before its lease's end.
func (s *shortLeases) outside(actions []recorder.Action) (out []string, slack time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slack = s.ttl
	for _, a := range actions {
		ws := s.windows[a.Node]
		if strings.HasPrefix(a.Action, "discovery#") || firstSeenCheck(a, ws) {
			continue
		}
		in := false
		for _, w := range ws {
			if !a.Time.Before(w.from) && !a.Time.After(w.to) {
				in = true
				slack = min(slack, w.to.Sub(a.Time))
			}
		}
		if !in {
			last := "no lease"
			for _, w := range ws {
				if w.to.Before(a.Time) {
					last = fmt.Sprintf("lease %s ended %s before", w.id, a.Time.Sub(w.to).Round(time.Millisecond))
				}
			}
			out = append(out, fmt.Sprintf("%s received %s at %s (%s)", a.Node, a.Action, a.Time.Format(recorder.TimeFormat), last))
		}
	}
	return out, slack
}

// firstSeenCheck reports whether a is the edge's check of a first-seen node: an rpcutil#ping
// before the node's first lease (the edge registers a node only once it answered one), not an
// action under a lease. A ping once the node was leased is counted like any other request.
func firstSeenCheck(a recorder.Action, ws []leaseWindow) bool {
	if a.Action != "rpcutil#ping" {
		return false
	}
	for _, w := range ws {
		if !a.Time.Before(w.from) {
			return false
		}
	}
	return true
}

// TestEdge_BrokerRestartSendsNothingPastTheLease restarts the broker while hosts are mid-flow
// under leases that end during the outage. A request published while the connection is down
// must not wait in a buffer and reach its node after the reconnect, when its lease has ended;
// the action log shows no request arriving at a node outside its leases.
func TestEdge_BrokerRestartSendsNothingPastTheLease(t *testing.T) {
	const count = 24
	l := startLab(t, lab.Options{
		Emulated: count,
		Faults: faults.NewSet(faults.Rule{Select: faults.Selector{Glob: lab.EmulatedPrefix(region) + "*"},
			Fault: faults.Fault{Delay: 300 * time.Millisecond, DelayActions: []string{"rpcutil#inventory"}}}),
	})
	// 5 s leases of which the edge counts 3 (its margin is 2 s): the outage below outlasts
	// every lease in flight when it starts. The margin is the slack a node has to record an
	// action the edge sent just before its count ended (the delayed inventory takes 300 ms).
	src := &shortLeases{ttl: 5 * time.Second, windows: map[string][]leaseWindow{}}
	re := startEdge(t, l,
		func(c *config.Config) { c.Workers, c.BatchSize = 4, 4 },
		func(o *edge.Options) {
			o.LeaseMargin = 2 * time.Second
			src.Source = o.Mode.Source()
			o.Mode = edge.Standalone(src)
		},
		func(o *app.Options) { o.RPCTimeout = time.Second })

	testkit.WaitFor(t, time.Minute, "hosts in flight after a first provisioned one", func() bool {
		s := re.App.Edge.Stats()
		return s.InFlight > 0 && s.Outcomes[hostflow.Provisioned] > 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.Region(region).RestartBroker(ctx, 6*time.Second); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 3*time.Minute, "every node provisioned after the broker restart", func() bool {
		for i := range count {
			if !re.Has(emu(i), hostflow.Provisioned) {
				return false
			}
		}
		return true
	})

	actions, err := recorder.ReadFile(l.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	out, slack := src.outside(actions)
	if len(out) > 0 {
		t.Fatalf("%d requests reached a node outside its leases:\n%s", len(out), strings.Join(out, "\n"))
	}
	lost := 0
	for i := range count {
		for _, r := range re.ResultsOf(emu(i)) {
			if r.Outcome != hostflow.Provisioned {
				lost++
			}
		}
	}
	t.Logf("%d actions recorded, all inside their leases, the latest %v before its lease's end at the source (the edge's count ends 2 s before that); %d host results other than provisioned",
		len(actions), slack.Round(time.Millisecond), lost)
}
