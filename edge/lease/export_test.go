// SPDX-License-Identifier: Apache-2.0

package lease

// Tracked is how many nodes the standalone source remembers: waiting, leased or settling.
func (l *Local) Tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.nodes)
}
