// SPDX-License-Identifier: Apache-2.0

package hostflow_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/tokens"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
)

// refuse fails the test if the flow sends anything.
type refuse struct{ t *testing.T }

func (r refuse) Request(_ context.Context, req rpc.Request) ([]rpc.Reply, error) {
	r.t.Errorf("the flow sent %s to %s", req.Label(), req.Identity)
	return nil, nil
}

func (r refuse) Run(context.Context, *helper.Request) (*helper.Response, error) {
	r.t.Error("the flow ran the helper")
	return nil, nil
}

func newFlow(t *testing.T, now time.Time) *hostflow.Flow {
	t.Helper()
	reg := metrics.New()
	w, err := rpc.NewWrapper(rpc.WrapperOptions{Site: "s", Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	f, err := hostflow.New(hostflow.Settings{Site: "s", Interval: time.Minute},
		hostflow.Deps{Helper: refuse{t}, Metrics: reg, Wrapper: w, Transport: refuse{t}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFlow_NodeWaitingOverTwoIntervalsIsSkipped(t *testing.T) {
	now := time.Now()
	f := newFlow(t, now)
	res := f.Run(context.Background(), hostflow.Host{Identity: "n1", Seen: now.Add(-121 * time.Second), Pause: rpc.PauseFunc(func() bool { return false })})
	if res.Outcome != hostflow.Skipped || !strings.Contains(res.Err.Error(), "skipping node that's been waiting 2m1s") {
		t.Fatalf("got %s %v", res.Outcome, res.Err)
	}
	if res.API().Outcome != "failed" || !strings.Contains(res.API().Error, "skipping") {
		t.Fatalf("reported as %+v", res.API())
	}
}

func TestFlow_PausedHostIsNotTouched(t *testing.T) {
	now := time.Now()
	f := newFlow(t, now)
	res := f.Run(context.Background(), hostflow.Host{Identity: "n1", Seen: now, Pause: rpc.PauseFunc(func() bool { return true })})
	if res.Outcome != hostflow.Paused {
		t.Fatalf("got %s %v", res.Outcome, res.Err)
	}
	if res := f.Run(context.Background(), hostflow.Host{Identity: "n2", Seen: now}); res.Outcome != hostflow.Paused {
		t.Fatalf("a host without a pause source ran: %s", res.Outcome)
	}
}

func TestNew_RefusesMissingFeatureDependencies(t *testing.T) {
	reg := metrics.New()
	w, _ := rpc.NewWrapper(rpc.WrapperOptions{Metrics: reg})
	base := hostflow.Deps{Helper: refuse{t}, Metrics: reg, Wrapper: w, Transport: refuse{t}}
	for name, s := range map[string]hostflow.Settings{
		"jwt without verifier":   {Features: hostflow.Features{JWT: true}},
		"ed25519 without signer": {Features: hostflow.Features{ED25519: true}},
		"pki without deny list":  {Features: hostflow.Features{PKI: true}},
	} {
		if _, err := hostflow.New(s, base); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := hostflow.New(hostflow.Settings{}, hostflow.Deps{Metrics: reg, Wrapper: w, Transport: refuse{t}}); err == nil {
		t.Error("no helper: accepted")
	}
}

func TestSigningPolicy_AutoLearnsFromJWTs(t *testing.T) {
	p := hostflow.NewSigningPolicy(rpc.SignAuto)
	open := &tokens.ProvisioningClaims{Secure: false}
	secure := &tokens.ProvisioningClaims{Secure: true}
	if p.Guess() {
		t.Fatal("a fresh auto policy guessed unsigned")
	}
	for range 16 {
		if p.Learn(open) {
			t.Fatal("a chs=false node is signed after its JWT")
		}
	}
	if !p.Guess() {
		t.Fatal("16 open nodes in a row did not make the policy guess unsigned")
	}
	if !p.Learn(secure) || p.Guess() {
		t.Fatal("a verifying node must be signed and end the guessing")
	}
	if !p.Learn(nil) {
		t.Fatal("a node without claims must be signed")
	}
	if a := hostflow.NewSigningPolicy(rpc.SignAlways); a.Guess() || !a.Learn(open) {
		t.Fatal("always must sign")
	}
	if n := hostflow.NewSigningPolicy(rpc.SignNever); !n.Guess() || n.Learn(secure) {
		t.Fatal("never must not sign")
	}
}
