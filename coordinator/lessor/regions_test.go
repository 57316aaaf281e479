// SPDX-License-Identifier: Apache-2.0

package lessor

import (
	"context"
	"fmt"
	"testing"
)

// TestManager_AcquiresInInventedRegionsLeaveNothingBehind: an unbound edge token may name any
// region, and every acquire subscribes to its region's wake-ups. Once no acquire waits in a
// region, the manager keeps nothing for it, so invented regions cannot grow the leader's memory.
func TestManager_AcquiresInInventedRegionsLeaveNothingBehind(t *testing.T) {
	m, _, _ := enabledManager(t, "n1")
	for i := range 200 {
		if _, err := m.Acquire(context.Background(), Request{Edge: "e", Region: fmt.Sprintf("invented-%03d", i), MaxNodes: 1}); err != nil {
			t.Fatal(err)
		}
	}
	m.mu.Lock()
	n := len(m.regions)
	m.mu.Unlock()
	if n != 0 {
		t.Fatalf("the manager keeps wake-ups of %d regions after 200 acquires in invented regions returned, want 0", n)
	}
}
