// SPDX-License-Identifier: Apache-2.0

package discovery

import "github.com/nats-io/nats.go"

// OnReconnect calls f each time the discovery connection is back after losing its broker:
// startup events published while it was away never reach it, so the edge sweeps at once
// instead of leaving new nodes to the next interval. Any handler already set on the connection
// (go-choria's logging) still runs first. Call it once, before Run; a second call chains.
func (d *Discoverer) OnReconnect(f func()) {
	nc := d.conn.Nats()
	prev := nc.Opts.ReconnectedCB
	nc.SetReconnectHandler(func(c *nats.Conn) {
		if prev != nil {
			prev(c)
		}
		f()
	})
}
