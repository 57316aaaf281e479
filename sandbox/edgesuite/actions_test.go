// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"testing"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// readActions is the lab's action log.
func readActions(t *testing.T, l *lab.Lab) []recorder.Action {
	t.Helper()
	a, err := recorder.ReadFile(l.ActionsFile())
	if err != nil {
		t.Fatal(err)
	}
	return a
}
