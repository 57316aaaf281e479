// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"context"
	"slices"
	"testing"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

// The source leaves out of its next registrations the nodes the coordinator answered as waiting
// or leased, and sends again those it answered final and those it reported a result for.
func TestCoordinator_RegistersAgainOnlyWhatASightingMayChange(t *testing.T) {
	f, src, _ := newFakeSource(t)
	ctx := context.Background()
	f.register.Store(`{"added":3,"final":["done"],"lists_final":true}`)
	f.report.Store(`{"applied":["n1"]}`)
	sweep := []register.Found{{Identity: "n1"}, {Identity: "n2"}, {Identity: "done"}}
	registerTimes(t, src, sweep, 2)
	if _, err := src.Report(ctx, api.Lease{ID: "l-1", Token: 4, Edge: "edge-eu-1", Region: "eu"}, []api.NodeResult{{Identity: "n1", Outcome: api.OutcomeFailed}}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Register(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	wantRegistered(t, f, [][]string{{"n1", "n2", "done"}, {"done"}, {"n1", "done"}})
}

// A sighting registered while the node's report is on its way is answered leased (the ledger has
// not applied the report yet); once the report is answered, the next sighting is sent again, or
// a node back in provisioning mode right after its result would wait register.DefaultResend
// (found by the simulator's stuck invariant, seed 110).
func TestCoordinator_ANodeReportedIsRegisteredAgainAfterTheReportWasAnswered(t *testing.T) {
	f, src, _ := newFakeSource(t)
	ctx := context.Background()
	f.register.Store(`{"added":1,"lists_final":true}`)
	f.report.Store(`{"applied":["n1"]}`)
	sweep := []register.Found{{Identity: "n1"}}
	if _, err := src.Register(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	hold, arrived := make(chan struct{}), make(chan struct{}, 1)
	f.holdReport.Store(hold)
	f.reportArrived.Store(arrived)
	reported := make(chan error, 1)
	go func() {
		_, err := src.Report(ctx, api.Lease{ID: "l-1", Token: 4, Edge: "edge-eu-1", Region: "eu"}, []api.NodeResult{{Identity: "n1", Outcome: api.OutcomeProvisioned}})
		reported <- err
	}()
	<-arrived
	if _, err := src.Register(ctx, sweep); err != nil { // answered leased: the report waits
		t.Fatal(err)
	}
	close(hold)
	if err := <-reported; err != nil {
		t.Fatal(err)
	}
	sent := func() [][]string {
		f.mu.Lock()
		defer f.mu.Unlock()
		return slices.Clone(f.registered)
	}
	before := len(sent())
	if _, err := src.Register(ctx, sweep); err != nil {
		t.Fatal(err)
	}
	if got := sent(); len(got) != before+1 || !slices.Equal(got[before], []string{"n1"}) {
		t.Fatalf("registrations sent %v: the sighting after the answered report left n1 out", got)
	}
}

// A node an earlier run of the edge left unsettled is registered at every sighting, whatever the
// answers say (and a report's answer does not change that, Queued.Forget): the earlier run's
// report may still be on its way and change the node once it lands (simulator seed 3452: a
// provisioned result of a killed run, held by the network, landed after the node failed under
// a newer lease, and the node stayed out of the sweeps for Resend while in provisioning mode).
func TestCoordinator_ANodeAnEarlierRunLeftUnsettledIsRegisteredAtEverySighting(t *testing.T) {
	f, src, _ := newFakeSource(t)
	f.register.Store(`{"added":1,"lists_final":true}`)
	src.Unsettled("n1")
	sweep := []register.Found{{Identity: "n1"}, {Identity: "n2"}}
	registerTimes(t, src, sweep, 3)
	wantRegistered(t, f, [][]string{{"n1", "n2"}, {"n1"}, {"n1"}})
}

// A carried report refused for another reason than a stale lease (a leader that could not
// record it: its results may still be applied, or not) leaves its nodes registered at every
// sighting until Resend, as a lone report given up does (Deliver); an applied one lets its node
// be sent once more. Before, the refused report's node stayed out of the sweeps for Resend.
func TestCoordinator_ACarriedReportRefusedNotStaleIsRegisteredAtEverySighting(t *testing.T) {
	f, src, _ := newFakeSource(t)
	ctx := context.Background()
	f.register.Store(`{"added":2,"lists_final":true}`)
	f.acquire.Store(`{"carries_reports":true,"reports":[{"request_id":"rid-1","applied":["a"]},{"request_id":"rid-2","error":{"error":"could not record","code":"unavailable"}}]}`)
	sweep := []register.Found{{Identity: "a"}, {Identity: "b"}}
	registerTimes(t, src, sweep, 1)
	_, answers, err := src.AcquireCarrying(ctx, 5, 0, twoDeliveries())
	if err != nil || len(answers) != 2 || answers[1].Err == nil || lease.Stale(answers[1].Err) {
		t.Fatalf("answers %+v, %v; want the second refused, not stale", answers, err)
	}
	registerTimes(t, src, sweep, 2)
	wantRegistered(t, f, [][]string{{"a", "b"}, {"a", "b"}, {"b"}})
}

// registerTimes registers sweep n times, as n sweeps of the edge would.
func registerTimes(t *testing.T, src *lease.Coordinator, sweep []register.Found, n int) {
	t.Helper()
	for range n {
		if _, err := src.Register(context.Background(), sweep); err != nil {
			t.Fatal(err)
		}
	}
}

// wantRegistered fails t unless the registrations f received name want, in order.
func wantRegistered(t *testing.T, f *fakeCoordinator, want [][]string) {
	t.Helper()
	f.mu.Lock()
	got := slices.Clone(f.registered)
	f.mu.Unlock()
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("registrations sent %v, want %v", got, want)
	}
}
