// SPDX-License-Identifier: Apache-2.0

package election

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/choria-io/go-choria/backoff"
	streams "github.com/choria-io/go-choria/providers/election/streams"
	"github.com/nats-io/nats.go"
)

// The election choria-provisioner campaigns in, and where the provisioning account reaches it.
const (
	Bucket    = "CHORIA_LEADER_ELECTION"
	Key       = "provisioner"
	APIPrefix = "choria.streams"
)

// Bounds go-choria's election puts on the bucket's TTL: it campaigns at three quarters of it,
// at least a second apart and a second before the key expires.
const (
	minTTL = 4 * time.Second
	maxTTL = time.Hour
)

// Options configure a Campaign.
type Options struct {
	// Name is the campaigner's value of the key while it leads (the edge's name).
	Name string
	// Backoff spaces the campaigns; default backoff.TwentySec, choria-provisioner's.
	Backoff streams.Backoff
	// Logger receives the election's progress at debug level; nil discards it.
	Logger *slog.Logger
}

// Campaign is this edge's place in the election.
type Campaign struct {
	kv  nats.KeyValue
	o   Options
	ttl time.Duration
}

// Open finds the election bucket over nc, a connection to the provisioning broker as its
// provisioning user, and checks that go-choria's election can run on it.
func Open(nc *nats.Conn, o Options) (*Campaign, error) {
	if o.Name == "" {
		return nil, errors.New("election: Name is empty")
	}
	if o.Backoff == nil {
		o.Backoff = backoff.TwentySec
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	js, err := nc.JetStream(nats.APIPrefix(APIPrefix))
	if err != nil {
		return nil, fmt.Errorf("election: Choria Streams: %w", err)
	}
	kv, err := js.KeyValue(Bucket)
	if err != nil {
		return nil, fmt.Errorf("election: the broker at %s offers no bucket %s (%w): it runs without Choria Streams", nc.ConnectedUrlRedacted(), Bucket, err)
	}
	st, err := kv.Status()
	if err != nil {
		return nil, fmt.Errorf("election: status of bucket %s: %w", Bucket, err)
	}
	if ttl := st.TTL(); ttl < minTTL || ttl > maxTTL {
		return nil, fmt.Errorf("election: bucket %s has a TTL of %v; go-choria's election needs %v to %v (the broker's plugin.choria.network.stream.leader_election_ttl)", Bucket, ttl, minTTL, maxTTL)
	}
	return &Campaign{kv: kv, o: o, ttl: st.TTL()}, nil
}

// TTL is how long the key outlives its leader's last campaign.
func (c *Campaign) TTL() time.Duration { return c.ttl }

// Campaign campaigns until ctx ends, calling changed(true) when this campaigner starts leading
// and changed(false) when it stops, at the end too. changed runs inside go-choria's election
// and must return quickly. The error says why the election could not run.
func (c *Campaign) Campaign(ctx context.Context, changed func(leading bool)) error {
	log := c.o.Logger.With("election", Key)
	e, err := streams.NewElection(c.o.Name, Key, c.kv,
		streams.OnWon(func() { changed(true) }),
		streams.OnLost(func() { changed(false) }),
		streams.WithBackoff(c.o.Backoff),
		streams.WithDebug(func(format string, a ...any) { log.Debug(fmt.Sprintf(format, a...)) }))
	if err != nil {
		return fmt.Errorf("election %s: %w", Key, err)
	}
	if err := e.Start(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("election %s: %w", Key, err)
	}
	return nil
}
