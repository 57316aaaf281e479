// SPDX-License-Identifier: Apache-2.0

package labkit

import (
	"context"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/plan"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// Plan makes one plan of cfg as `muster-edge plan` does, with the suites' short reply windows,
// and fails the test on an error.
func Plan(t testing.TB, cfg *config.Config, o app.PlanOptions) *plan.Report {
	t.Helper()
	o.RPCTimeout, o.RetryPolicy = 4*time.Second, backoff.Policy{Millis: []int{50, 100, 200}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := app.Plan(ctx, cfg, o)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return r
}

// NotReads are the actions of a lab's log that a plan may not cause: anything but
// discovery#ping and rpcutil#inventory.
func NotReads(actions []recorder.Action) []recorder.Action {
	var out []recorder.Action
	for _, a := range actions {
		if a.Action != "discovery#ping" && a.Action != "rpcutil#inventory" {
			out = append(out, a)
		}
	}
	return out
}

// Counted is how often each node received action.
func Counted(actions []recorder.Action, action string) map[string]int {
	out := map[string]int{}
	for _, a := range actions {
		if a.Action == action {
			out[a.Node]++
		}
	}
	return out
}
