// SPDX-License-Identifier: Apache-2.0

package labkit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"
	election "github.com/choria-io/go-choria/providers/election/streams"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/sandbox/fleet/broker"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// Campaigner is a second campaigner in a region's `provisioner` election (the lab must run with
// Streams), built with go-choria's election package over the provisioning account as
// choria-provisioner's leader_election is. It provisions nothing: it holds the election.
type Campaigner struct {
	// Name is its value of the election key, as choria-provisioner's is its Choria identity.
	Name    string
	leading atomic.Bool
	stop    context.CancelFunc
	done    chan error
	halted  sync.Once
}

// StartCampaigner connects as caller (a lab client no edge runs as) and campaigns as name with
// the campaign backoff bo (choria-provisioner's backoff.TwentySec when nil) until Halt or the
// test's end.
func StartCampaigner(t testing.TB, l *lab.Lab, region, caller, name string, bo *backoff.Policy) *Campaigner {
	t.Helper()
	b := l.Region(region).Broker()
	tlsc, err := b.ClientTLS(caller)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(b.URL(), nats.Secure(tlsc), nats.UserInfo(broker.ProvisioningUser, b.ProvisioningPassword()), nats.Timeout(10*time.Second))
	if err != nil {
		t.Fatalf("campaigner: connect as the provisioner: %v", err)
	}
	t.Cleanup(nc.Close)
	kv, err := broker.ElectionKV(nc)
	if err != nil {
		t.Fatal(err)
	}
	c := &Campaigner{Name: name, done: make(chan error, 1)}
	policy := backoff.TwentySec
	if bo != nil {
		policy = *bo
	}
	e, err := election.NewElection(name, "provisioner", kv, election.WithBackoff(policy),
		election.OnWon(func() { c.leading.Store(true) }), election.OnLost(func() { c.leading.Store(false) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	go func() { c.done <- e.Start(ctx) }()
	t.Cleanup(c.Halt)
	return c
}

// Leading is true once go-choria told the campaigner it won, until it lost or stopped.
func (c *Campaigner) Leading() bool { return c.leading.Load() }

// Halt stops campaigning and returns once the election returned; the key stays until its TTL.
func (c *Campaigner) Halt() {
	c.halted.Do(func() {
		c.stop()
		<-c.done
	})
}

// CandidateCampaigns counts the campaigns go-choria's election made as a candidate in the
// `provisioner` election by every campaigner of this process but the one named not (go-choria
// counts them in Prometheus's default registry).
func CandidateCampaigns(t testing.TB, not string) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "choria_election_campaigns" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["election"] == "provisioner" && labels["state"] == "candidate" && labels["identity"] != not {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
