// SPDX-License-Identifier: Apache-2.0

package hostflow_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/rpc"
)

// hold sends like script, but a request for block waits until the caller stops waiting, as a
// real connection does in its reply window when the edge shuts down.
type hold struct {
	script
	block   string
	started chan struct{}
}

func (h *hold) Request(ctx context.Context, req rpc.Request) ([]rpc.Reply, error) {
	h.note(req.Label())
	if req.Label() == h.block {
		close(h.started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.answer(req.Label()), nil
}

// A restart the node may have acted on (sent, never answered) is Unknown however the flow ends:
// only rediscovery can tell a restarted node from one that never got the call. Failed or Paused
// would close its journal intent and count a failure for a node restarting into its configuration.
func TestFlow_StoppedWhileARestartWaitsForItsReplyIsUnknown(t *testing.T) {
	tr := &hold{script: script{answer: answering("n1")}, block: "choria_provision#restart", started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-tr.started; cancel() }()
	res := scriptedFlow(t, tr).Run(ctx, hostflow.Host{Identity: "n1", Pause: running})
	if res.Outcome != hostflow.Unknown || res.Step != "restart" {
		t.Fatalf("outcome %s step %s (%v) after the edge stopped during the restart's reply window, want unknown at restart", res.Outcome, res.Step, res.Err)
	}
}

// pauseAfter is a node that never answers restart; the host's pause source turns true once the
// first restart was sent (an operator pause or the lease running out between tries).
type pauseAfter struct {
	script
	paused atomic.Bool
}

func (p *pauseAfter) Request(ctx context.Context, req rpc.Request) ([]rpc.Reply, error) {
	replies, err := p.script.Request(ctx, req)
	if req.Label() == "choria_provision#restart" {
		p.paused.Store(true)
	}
	return replies, err
}

func TestFlow_PausedAfterAnUnansweredRestartIsUnknown(t *testing.T) {
	tr := &pauseAfter{script: script{answer: answering("n1", "choria_provision#restart")}}
	res := scriptedFlow(t, tr).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: rpc.PauseFunc(tr.paused.Load)})
	if res.Outcome != hostflow.Unknown || res.Step != "restart" {
		t.Fatalf("outcome %s step %s (%v) after a pause between restart tries, want unknown at restart", res.Outcome, res.Step, res.Err)
	}
	if got := strings.Count(tr.sent(), "choria_provision#restart"); got != 1 {
		t.Fatalf("%d restarts sent, want 1 (none after the pause): %s", got, tr.sent())
	}
}

// The presence check before a restart's next try takes time (a targeted discovery); a pause or
// a lease that runs out meanwhile must stop that try, not let it be sent.
func TestFlow_PauseDuringThePresenceCheckSendsNoFurtherRestart(t *testing.T) {
	tr := &script{answer: answering("n1", "choria_provision#restart")}
	var paused atomic.Bool
	present := func(context.Context, string) (bool, error) {
		paused.Store(true) // the lease's deadline passes while discovery looks
		return true, nil
	}
	f := scriptedFlowWith(t, tr, configures{}, upgrade.Settings{}, present)
	res := f.Run(context.Background(), hostflow.Host{Identity: "n1", Pause: rpc.PauseFunc(paused.Load)})
	if got := strings.Count(tr.sent(), "choria_provision#restart"); got != 1 {
		t.Fatalf("%d restarts sent, want 1 (none once paused): %s", got, tr.sent())
	}
	if res.Outcome != hostflow.Unknown || res.Step != "restart" {
		t.Fatalf("outcome %s step %s (%v), want unknown at restart", res.Outcome, res.Step, res.Err)
	}
}

// With upgrades optional, a release_update the node acted on (no reply, and it left provisioning
// mode) or may have acted on is not "continued" into configuring a node replacing itself.
func TestFlow_OptionalUpgradeTheNodeMayHaveActedOnIsNotContinued(t *testing.T) {
	up := upgrade.Settings{Enabled: true, Repository: "https://repo.example.net", Optional: true}
	says := helperSays{Upgrade: "0.31.0", Configuration: map[string]string{"a": "b"}}
	for _, tc := range []struct {
		name    string
		present bool
		want    hostflow.Outcome
	}{
		{"left", false, hostflow.Settled("release_update")},
		{"still there", true, hostflow.Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &script{answer: answering("n1", "choria_provision#release_update")}
			present := func(context.Context, string) (bool, error) { return tc.present, nil }
			res := scriptedFlowWith(t, tr, says, up, present).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running})
			if strings.Contains(tr.sent(), "choria_provision#configure") {
				t.Fatalf("configure sent after an unanswered release_update: %s", tr.sent())
			}
			if res.Outcome != tc.want || res.Step != "release_update" {
				t.Fatalf("outcome %s step %s (%v), want %s at release_update", res.Outcome, res.Step, res.Err, tc.want)
			}
		})
	}
}
