// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/broker"
)

// RestartBroker stops the region's broker, waits down, and starts it again on the same port
// with the same credentials, CA and signer, as an operator restarting the service would: every
// connected node and client loses its connection and must reconnect by itself. Frameworks
// handed out by Framework keep their (reconnecting) connections.
func (r *Region) RestartBroker(ctx context.Context, down time.Duration) error {
	r.restartMu.Lock()
	defer r.restartMu.Unlock()
	old := r.broker.Load()
	if err := old.Stop(); err != nil {
		return fmt.Errorf("region %s: stop broker: %w", r.name, err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(down):
	}
	opts := broker.Options{
		Dir: filepath.Join(r.dir, "broker"), Region: r.name, CA: r.lab.ca, Signer: r.lab.signer,
		Password: old.ProvisioningPassword(), Token: old.Token(), Port: old.Port(), Logger: r.lab.opts.Logger,
		Streams: r.lab.opts.Streams, ElectionTTL: r.lab.opts.ElectionTTL,
	}
	// The old listener's port may linger a moment after Stop; a failed start is retried.
	var err error
	for try := 0; try < 20; try++ {
		var b *broker.Broker
		if b, err = broker.Start(context.WithoutCancel(ctx), opts); err == nil {
			r.broker.Store(b)
			return nil
		}
		time.Sleep(100 * time.Millisecond) // the port is released asynchronously
	}
	return fmt.Errorf("region %s: start broker again on port %d: %w", r.name, opts.Port, err)
}
