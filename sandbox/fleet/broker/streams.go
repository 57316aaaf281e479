// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// ElectionBucket is go-choria's leader election bucket; ElectionAPIPrefix is where a client of
// the provisioning account reaches the Choria account's JetStream API for it.
const (
	ElectionBucket    = "CHORIA_LEADER_ELECTION"
	ElectionAPIPrefix = "choria.streams"
)

// streamsConfig is the broker configuration that enables Choria Streams. Every replica count is
// one: go-choria's default (-1, the number of peers) makes the broker wait 10 to 70 s before it
// creates its streams, the election bucket among them.
func streamsConfig(opts Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin.choria.network.stream.store = %s\n", filepath.Join(opts.Dir, "streams"))
	for _, k := range []string{"event", "machine", "advisory", "leader_election", "executor"} {
		fmt.Fprintf(&b, "plugin.choria.network.stream.%s_replicas = 1\n", k)
	}
	if opts.ElectionTTL > 0 {
		fmt.Fprintf(&b, "plugin.choria.network.stream.leader_election_ttl = %s\n", opts.ElectionTTL)
	}
	return b.String()
}

// Streams reports whether the broker runs Choria Streams.
func (b *Broker) Streams() bool { return b.opts.Streams }

// defaultElectionTTL is go-choria's plugin.choria.network.stream.leader_election_ttl.
const defaultElectionTTL = time.Minute

// ElectionTTL is the election bucket's TTL with Streams.
func (b *Broker) ElectionTTL() time.Duration {
	if b.opts.ElectionTTL > 0 {
		return b.opts.ElectionTTL
	}
	return defaultElectionTTL
}

// ElectionKV opens the leader election bucket as the provisioning account sees it, over nc
// (a connection as ProvisioningUser), as choria-provisioner does.
func ElectionKV(nc *nats.Conn) (nats.KeyValue, error) {
	js, err := nc.JetStream(nats.APIPrefix(ElectionAPIPrefix))
	if err != nil {
		return nil, fmt.Errorf("election bucket: %w", err)
	}
	kv, err := js.KeyValue(ElectionBucket)
	if err != nil {
		return nil, fmt.Errorf("election bucket %s: %w", ElectionBucket, err)
	}
	return kv, nil
}

// waitElection returns once a provisioning client reads the election bucket's status: the
// broker creates its streams after it accepts connections.
func (b *Broker) waitElection(ctx context.Context, limit time.Duration) error {
	tlsc, err := b.ClientTLS("broker-" + b.opts.Region + "-streams-check")
	if err != nil {
		return err
	}
	nc, err := nats.Connect(b.url, nats.Secure(tlsc), nats.UserInfo(ProvisioningUser, b.opts.Password), nats.Timeout(10*time.Second))
	if err != nil {
		return fmt.Errorf("broker %s: connect to check its election bucket: %w", b.url, err)
	}
	defer nc.Close()
	deadline := time.Now().Add(limit)
	for {
		kv, err := ElectionKV(nc)
		if err == nil {
			if _, err = kv.Status(); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("broker %s: no election bucket after %v (see %s): %w", b.url, limit, filepath.Join(b.opts.Dir, "broker.log"), err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the election bucket of broker %s: %w", b.url, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
