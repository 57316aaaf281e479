// SPDX-License-Identifier: Apache-2.0

package rpc_test

import (
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/rpc"
)

// TestDuplicateResponderError_StartsWithTheWirePrefix: the error's text is what an edge reports,
// and a coordinator holds the node when it starts with api.DuplicateResponderPrefix.
func TestDuplicateResponderError_StartsWithTheWirePrefix(t *testing.T) {
	if s := (&rpc.DuplicateResponderError{Action: "jwt", Identity: "n1"}).Error(); !strings.HasPrefix(s, api.DuplicateResponderPrefix) {
		t.Fatalf("%q does not start with %q", s, api.DuplicateResponderPrefix)
	}
}
