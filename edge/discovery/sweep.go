// SPDX-License-Identifier: Apache-2.0

package discovery

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/choria-io/go-choria/inter"
	"github.com/choria-io/go-choria/protocol"
	v1 "github.com/choria-io/go-choria/protocol/v1"
	v2 "github.com/choria-io/go-choria/protocol/v2"
	"github.com/nats-io/nats.go"

	"github.com/seed96588659/muster/pkg/api"
)

// Collective is where nodes in provisioning mode live.
const Collective = "provisioning"

// A sweep's replies wait within these bounds (a reply is 1-2 KiB; a region may have 10,000 nodes
// and more): finite, so a flood of replies cannot grow the heap without end.
const (
	sweepPendingMsgs  = 64 * 1024
	sweepPendingBytes = 128 << 20
)

// Options tune a Discoverer; start from DefaultOptions.
type Options struct {
	// Name is the broker connection name; "" is the framework's caller id + "-discovery".
	Name string
	// First is how long a sweep waits for the first reply; default 2s.
	First time.Duration
	// Window ends a sweep once no reply came for this long; default 500ms.
	Window time.Duration
	// Max bounds a sweep; default 30s.
	Max time.Duration
	// Events bounds the startup events Listen holds; default DefaultEventLimits.
	Events EventLimits
	// MaxNodes bounds the identities one sweep takes: anyone on the provisioning broker may
	// answer, for as many identities as it likes. A sweep that reaches it ends with a
	// *SweepCutError; default 50,000.
	MaxNodes int
}

// DefaultOptions returns the options every Discoverer starts from.
func DefaultOptions() Options {
	return Options{First: 2 * time.Second, Window: 500 * time.Millisecond, Max: 30 * time.Second, Events: DefaultEventLimits(), MaxNodes: 50_000}
}

// Validate refuses a sweep that could not end, naming the field.
func (o Options) Validate() error {
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"First", o.First}, {"Window", o.Window}, {"Max", o.Max}} {
		if d.v <= 0 {
			return fmt.Errorf("discovery: %s is %s, want a positive duration", d.field, d.v)
		}
	}
	if o.MaxNodes <= 0 {
		return fmt.Errorf("discovery: MaxNodes is %d, want a positive number", o.MaxNodes)
	}
	return o.Events.Validate()
}

// Discoverer sweeps and listens over one broker connection of its own.
type Discoverer struct {
	fw   inter.Framework
	conn inter.Connector
	o    Options

	events eventSub // Listen's subscription, for Events
}

// New checks the options and connects to the framework's brokers.
func New(ctx context.Context, fw inter.Framework, o Options) (*Discoverer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = fw.CallerID() + "-discovery"
	}
	conn, err := fw.NewConnector(ctx, fw.MiddlewareServers, o.Name, fw.Logger("muster-discovery"))
	if err != nil {
		return nil, fmt.Errorf("discovery: connect to broker as %s: %w", o.Name, err)
	}
	return &Discoverer{fw: fw, conn: conn, o: o}, nil
}

// Close ends the connection.
func (d *Discoverer) Close() { d.conn.Close() }

// NATS is the broker connection the Discoverer sweeps and listens over; the edge's leader
// election campaigns over it too.
func (d *Discoverer) NATS() *nats.Conn { return d.conn.Nats() }

// SweepCutError ends a sweep that reached Options.MaxNodes identities; Sweep returns it with
// the identities it took.
type SweepCutError struct{ Limit int }

func (e *SweepCutError) Error() string {
	return fmt.Sprintf("discovery sweep ended at its bound of %d identities", e.Limit)
}

// SweepCut is the bound the sweep reached.
func (e *SweepCutError) SweepCut() int { return e.Limit }

// Sweep broadcasts a discovery ping to nodes with the choria_provision agent and returns every
// identity that answered, each once, up to Options.MaxNodes (then with a *SweepCutError). A
// reply that does not decode, or names an identity the coordinators' API would refuse, is
// skipped. With identities given, only those nodes are asked.
func (d *Discoverer) Sweep(ctx context.Context, identities ...string) ([]string, error) {
	body := base64.StdEncoding.EncodeToString([]byte("ping"))
	msg, err := d.fw.NewMessage([]byte(body), "discovery", Collective, inter.RequestMessageType, nil)
	if err != nil {
		return nil, fmt.Errorf("discovery: new message: %w", err)
	}
	filter := protocol.NewFilter()
	filter.AddAgentFilter("choria_provision")
	for _, id := range identities {
		filter.AddIdentityFilter(id)
	}
	msg.SetFilter(filter)
	reply := msg.ReplyTarget()
	if err := msg.SetReplyTo(reply); err != nil {
		return nil, fmt.Errorf("discovery: reply target: %w", err)
	}

	// The subscription hands messages to the sweep through ch; NATS buffers a burst of 10,000
	// replies within sweepPending rather than dropping them as a slow consumer.
	ch := make(chan *nats.Msg, 4096)
	done := make(chan struct{})
	defer close(done)
	sub, err := d.conn.Nats().Subscribe(reply, func(m *nats.Msg) {
		select {
		case ch <- m:
		case <-done:
		}
	})
	if err != nil {
		return nil, fmt.Errorf("discovery: subscribe to %s: %w", reply, err)
	}
	defer sub.Unsubscribe()
	if err := sub.SetPendingLimits(sweepPendingMsgs, sweepPendingBytes); err != nil {
		return nil, fmt.Errorf("discovery: subscription limits: %w", err)
	}
	if err := d.conn.Publish(msg); err != nil {
		return nil, fmt.Errorf("discovery: publish: %w", err)
	}

	maxT := time.NewTimer(d.o.Max)
	defer maxT.Stop()
	window := time.NewTimer(d.o.First)
	defer window.Stop()

	seen := make(map[string]struct{})
	var found []string
	for {
		select {
		case m := <-ch:
			id, err := replySender(d.fw.NewTransportFromJSON, m.Data)
			if err != nil {
				continue
			}
			if _, dup := seen[id]; !dup {
				seen[id] = struct{}{}
				found = append(found, id)
				if len(found) >= d.o.MaxNodes {
					return found, &SweepCutError{Limit: d.o.MaxNodes}
				}
			}
			window.Reset(d.o.Window)
		case <-window.C:
			return found, nil
		case <-maxT.C:
			return found, nil
		case <-ctx.Done():
			return found, ctx.Err()
		}
	}
}

// replySender is the identity a discovery reply names: its transport's sender, read no further
// (a sweep of 10,000 nodes stays cheap). An identity the coordinators' API would refuse (empty,
// too long, spaces or control characters) is an error: anyone may answer a sweep.
func replySender(decode func([]byte) (protocol.TransportMessage, error), data []byte) (string, error) {
	t, err := decode(data)
	if err != nil {
		return "", fmt.Errorf("discovery reply: %w", err)
	}
	// go-choria reads the sender through the headers without looking: a transport whose
	// headers are null or missing would panic the sweep.
	switch t := t.(type) {
	case *v1.TransportMessage:
		if t.Headers == nil {
			return "", errors.New("discovery reply: transport has no headers")
		}
	case *v2.TransportMessage:
		if t.Headers == nil {
			return "", errors.New("discovery reply: transport has no headers")
		}
	default:
		return "", fmt.Errorf("discovery reply: transport %T is not go-choria's v1 or v2", t)
	}
	id := t.SenderID()
	if err := api.ValidateName("discovery reply sender", id); err != nil {
		return "", err
	}
	return id, nil
}
