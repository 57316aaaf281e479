// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"context"
	"errors"
	"testing"

	"github.com/seed96588659/muster/pkg/rpc"
)

// TestReader_RefusesEveryActionButInventory: the plan's transport refuses each choria_provision
// action, and any rpcutil action but inventory, before anything is sent (its inner transport is
// nil: reaching it would panic).
func TestReader_RefusesEveryActionButInventory(t *testing.T) {
	tr := readOnly{}
	for _, a := range []string{"jwt", "gen25519", "gencsr", "configure", "restart", "release_update", "shutdown", "reprovision"} {
		if _, err := tr.Request(context.Background(), rpc.Request{Agent: "choria_provision", Action: a, Identity: "n1"}); !errors.Is(err, ErrNotRead) {
			t.Errorf("choria_provision#%s: %v, want ErrNotRead", a, err)
		}
	}
	if _, err := tr.Request(context.Background(), rpc.Request{Agent: "rpcutil", Action: "ping", Identity: "n1"}); !errors.Is(err, ErrNotRead) {
		t.Errorf("rpcutil#ping: %v, want ErrNotRead", err)
	}
}
