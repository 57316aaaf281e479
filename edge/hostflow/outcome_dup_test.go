// SPDX-License-Identifier: Apache-2.0

package hostflow

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/rpc"
)

// TestResultAPI_DuplicateResponderIsAFailureTheCoordinatorHolds: on the wire a duplicate
// responder is a failed result (every coordinator build takes it) whose error starts with
// api.DuplicateResponderPrefix (a coordinator of cluster protocol 8 holds the node), however the
// step that noticed it wrapped the error; another failure never starts so.
func TestResultAPI_DuplicateResponderIsAFailureTheCoordinatorHolds(t *testing.T) {
	dup := &rpc.DuplicateResponderError{Action: "gencsr", Identity: "n1"}
	for _, err := range []error{dup, fmt.Errorf("configure: %w", dup)} {
		n := Result{Identity: "n1", Outcome: DuplicateResponder, Err: err}.API()
		if n.Outcome != api.OutcomeFailed || !n.IsDuplicateResponder() || !strings.Contains(n.Error, "gencsr") {
			t.Errorf("%v: %+v", err, n)
		}
	}
	if n := (Result{Identity: "n1", Outcome: Failed, Err: errors.New("inventory failed")}).API(); n.IsDuplicateResponder() {
		t.Errorf("a plain failure reads as a duplicate responder: %+v", n)
	}
}
