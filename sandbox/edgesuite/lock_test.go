// SPDX-License-Identifier: Apache-2.0

package edgesuite

import (
	"context"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/sandbox/lab"
)

// lockNode has another client identity (a second provisioner) take identity's provisioning lock
// by fetching its JWT, and returns that client's identity.
func lockNode(t *testing.T, l *lab.Lab, identity string) string {
	t.Helper()
	const caller = "edge-eu-3.mcollective"
	fw, err := l.Region(region).Framework(caller)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.Dial(context.Background(), fw, rpc.ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w, err := rpc.NewWrapper(rpc.WrapperOptions{Site: region, Metrics: metrics.New(), Policy: backoff.Policy{Millis: []int{50}}})
	if err != nil {
		t.Fatal(err)
	}
	n := rpc.NewNode(w, conn, identity, l.Region(region).Broker().Token(), rpc.PauseFunc(func() bool { return false }))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.JWT(ctx); err != nil {
		t.Fatalf("the other provisioner could not take %s's lock: %v", identity, err)
	}
	return caller
}
