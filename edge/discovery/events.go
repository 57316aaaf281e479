// SPDX-License-Identifier: Apache-2.0

package discovery

import (
	"context"
	"fmt"

	"github.com/choria-io/go-choria/lifecycle"
	"github.com/nats-io/nats.go"
)

// Listen subscribes to the startup events of component and, until ctx ends, calls found with
// the identity of every node that announces its startup. Events of other types are skipped and
// undecodable messages reported to bad. It returns once the subscription is in place.
func (d *Discoverer) Listen(ctx context.Context, component string, found func(identity string), bad func(error)) error {
	subject := fmt.Sprintf("choria.lifecycle.event.startup.%s", component)
	ch := make(chan *nats.Msg, 4096)
	sub, err := d.conn.Nats().Subscribe(subject, func(m *nats.Msg) {
		select {
		case ch <- m:
		case <-ctx.Done():
		}
	})
	if err != nil {
		return fmt.Errorf("discovery: subscribe to %s: %w", subject, err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		sub.Unsubscribe()
		return fmt.Errorf("discovery: subscription limits: %w", err)
	}
	if err := d.conn.Nats().Flush(); err != nil {
		sub.Unsubscribe()
		return fmt.Errorf("discovery: subscribe to %s: %w", subject, err)
	}
	go func() {
		defer sub.Unsubscribe()
		for {
			select {
			case m := <-ch:
				e, err := lifecycle.NewFromJSON(m.Data)
				if err != nil {
					if bad != nil {
						bad(fmt.Errorf("lifecycle event on %s: %w", m.Subject, err))
					}
					continue
				}
				if e.Type() == lifecycle.Startup && e.Identity() != "" {
					found(e.Identity())
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
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
