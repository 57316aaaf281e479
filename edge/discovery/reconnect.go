// SPDX-License-Identifier: Apache-2.0

package discovery

import "github.com/nats-io/nats.go"

// OnReconnect calls f each time the discovery connection is back after losing its broker (call it
// once, before Run: a second call chains a second handler):
// startup events published meanwhile are lost (a broker restart drops every subscription), so
// the edge sweeps at once instead of leaving new nodes to the next interval. Any handler
// already set on the connection (go-choria's logging) still runs first.
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
