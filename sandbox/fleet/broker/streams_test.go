// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"context"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"
	election "github.com/choria-io/go-choria/providers/election/streams"
	"github.com/nats-io/nats.go"

	"github.com/seed96588659/muster/pkg/testkit"
)

func provisionerConn(t *testing.T, b *Broker, identity string) *nats.Conn {
	t.Helper()
	tlsc, err := b.ClientTLS(identity)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(b.URL(), nats.Secure(tlsc), nats.UserInfo(ProvisioningUser, b.ProvisioningPassword()), nats.Timeout(10*time.Second))
	if err != nil {
		t.Fatalf("connect as the provisioner: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestBroker_StreamsRunChoriaProvisionersElection: with Streams a client of the provisioning
// account campaigns for `provisioner` in go-choria's election bucket and wins, as
// choria-provisioner's leader_election does; the bucket's TTL is the one asked for.
func TestBroker_StreamsRunChoriaProvisionersElection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := Start(ctx, Options{Dir: t.TempDir(), Region: "eu", Streams: true, ElectionTTL: 5 * time.Second})
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { b.Stop() })

	kv, err := ElectionKV(provisionerConn(t, b, "edge-eu-1.mcollective"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.TTL() != 5*time.Second {
		t.Errorf("election bucket TTL %v, want 5s", st.TTL())
	}
	e, err := election.NewElection("edge-eu-1", "provisioner", kv, election.WithBackoff(backoff.Policy{Millis: []int{200, 400}}))
	if err != nil {
		t.Fatal(err)
	}
	ectx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- e.Start(ectx) }()
	testkit.WaitFor(t, 30*time.Second, "the campaigner to lead", e.IsLeader)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("election ended with %v", err)
	}
}

// TestBroker_NoElectionBucketWithoutStreams: without Streams the election bucket cannot be opened.
func TestBroker_NoElectionBucketWithoutStreams(t *testing.T) {
	b := startBroker(t)
	start := time.Now()
	_, err := ElectionKV(provisionerConn(t, b, "edge-eu-1.mcollective"))
	if err == nil {
		t.Fatal("election bucket opened on a broker without streams")
	}
	t.Logf("without streams after %v: %v", time.Since(start), err)
}

func TestStart_RefusesAnElectionTTLTheElectionCannotUse(t *testing.T) {
	_, err := Start(context.Background(), Options{Dir: t.TempDir(), Streams: true, ElectionTTL: 2 * time.Second})
	if err == nil {
		t.Fatal("Start took a 2s election TTL")
	}
	t.Log(err)
}
