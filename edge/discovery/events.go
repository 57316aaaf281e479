// SPDX-License-Identifier: Apache-2.0

package discovery

import (
	"context"
	"fmt"

	"github.com/choria-io/go-choria/lifecycle"
	"github.com/nats-io/nats.go"
)

// Listen subscribes to the startup events of component and, until ctx ends, calls found with
// the identity of every node that announces its startup. Events of other types are skipped;
// undecodable ones are reported to bad, as are events dropped unread (a *DroppedError): larger
// than Options.Events.MaxSize, or beyond its pending bounds while found is slow. A dropped
// event's node is still in provisioning mode and answers the next sweep. Listen returns once the
// subscription is in place.
func (d *Discoverer) Listen(ctx context.Context, component string, found func(identity string), bad func(error)) error {
	subject := fmt.Sprintf("choria.lifecycle.event.startup.%s", component)
	if bad == nil {
		bad = func(error) {}
	}
	limits := d.o.Events
	overflow := 0 // the subscription's drops reported so far; the handler runs one event at a time
	// The handler blocks in found while the edge is busy: NATS then holds the next events within
	// the pending bounds and drops the rest, instead of a queue of its own growing without end.
	sub, err := d.conn.Nats().Subscribe(subject, func(m *nats.Msg) {
		if ctx.Err() != nil {
			return
		}
		if n, err := m.Sub.Dropped(); err == nil && n > overflow {
			bad(&DroppedError{Reason: DropOverflow, Count: n - overflow})
			overflow = n
		}
		if len(m.Data) > limits.MaxSize {
			bad(&DroppedError{Reason: DropOversized, Count: 1})
			return
		}
		id, err := startupIdentity(m.Data)
		if err != nil {
			bad(fmt.Errorf("lifecycle event on %s: %w", m.Subject, err))
			return
		}
		if id != "" {
			found(id)
		}
	})
	if err != nil {
		return fmt.Errorf("discovery: subscribe to %s: %w", subject, err)
	}
	if err := sub.SetPendingLimits(limits.PendingMsgs, limits.PendingBytes); err != nil {
		sub.Unsubscribe()
		return fmt.Errorf("discovery: subscription limits: %w", err)
	}
	d.events.set(sub)
	if err := d.conn.Nats().Flush(); err != nil {
		sub.Unsubscribe()
		return fmt.Errorf("discovery: subscribe to %s: %w", subject, err)
	}
	context.AfterFunc(ctx, func() { _ = sub.Unsubscribe() })
	return nil
}

// startupIdentity is the identity a startup event announces, "" for an event of another type
// or without one.
func startupIdentity(data []byte) (string, error) {
	e, err := lifecycle.NewFromJSON(data)
	if err != nil {
		return "", err
	}
	if e.Type() != lifecycle.Startup {
		return "", nil
	}
	return e.Identity(), nil
}

// Announce publishes this edge's own startup event (component "provisioner"), as
// choria-provisioner does, so fleet tooling sees it start.
func (d *Discoverer) Announce(identity, version string) error {
	e, err := lifecycle.New(lifecycle.Startup, lifecycle.Component("provisioner"), lifecycle.Identity(identity), lifecycle.Version(version))
	if err != nil {
		return fmt.Errorf("startup event: %w", err)
	}
	if err := lifecycle.PublishEvent(e, d.conn); err != nil {
		return fmt.Errorf("publish startup event: %w", err)
	}
	return nil
}
