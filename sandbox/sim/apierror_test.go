// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"testing"

	"github.com/seed96588659/muster/coordinator"
)

// A simulated member answers every service error with the status and code a real member's HTTP
// layer gives it: the simulated edges must read refusals as real edges do. (The simulator kept a
// copy of the table that had drifted: a cluster-protocol refusal read 400 instead of 409.)
func TestMember_AnswersServiceErrorsAsTheCoordinatorsTable(t *testing.T) {
	m := &member{name: "c1"}
	for _, mp := range coordinator.HTTPErrors() {
		got := m.apiError(fmt.Errorf("apply: %w", mp.Err))
		if got.Status != mp.Status || got.Code != mp.Code {
			t.Errorf("%v: %d %s, want %d %s", mp.Err, got.Status, got.Code, mp.Status, mp.Code)
		}
	}
}
