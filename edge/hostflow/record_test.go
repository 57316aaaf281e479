// SPDX-License-Identifier: Apache-2.0

package hostflow_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/choria-io/go-choria/backoff"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/hostflow"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
)

// script answers each action with answer's replies and logs what was sent, in order.
type script struct {
	mu     sync.Mutex
	log    []string
	answer func(action string) []rpc.Reply
}

func (s *script) Request(_ context.Context, req rpc.Request) ([]rpc.Reply, error) {
	s.note(req.Label())
	return s.answer(req.Label()), nil
}

func (s *script) note(what string) {
	s.mu.Lock()
	s.log = append(s.log, what)
	s.mu.Unlock()
}

func (s *script) sent() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, " ")
}

// answering is a node in provisioning mode that answers every call; silent lists the actions
// it never answers.
func answering(id string, silent ...string) func(string) []rpc.Reply {
	return func(action string) []rpc.Reply {
		for _, s := range silent {
			if s == action {
				return nil
			}
		}
		data := `{"message":"ok"}`
		if action == "rpcutil#inventory" {
			data = `{"version":"0.30.0","upgradable":true,"agents":["choria_provision"],"facts":{}}`
		}
		return []rpc.Reply{{Sender: id, Data: []byte(data)}}
	}
}

type configures struct{}

func (configures) Run(context.Context, *helper.Request) (*helper.Response, error) {
	return &helper.Response{Configuration: map[string]string{"plugin.choria.srv_domain": "example.net"}}, nil
}

// helperSays answers every helper request with resp.
type helperSays helper.Response

func (h helperSays) Run(context.Context, *helper.Request) (*helper.Response, error) {
	r := helper.Response(h)
	return &r, nil
}

func scriptedFlow(t *testing.T, tr rpc.Transport) *hostflow.Flow {
	t.Helper()
	return scriptedFlowWith(t, tr, configures{}, upgrade.Settings{})
}

func scriptedFlowWith(t *testing.T, tr rpc.Transport, h hostflow.Helper, up upgrade.Settings, presence ...func(context.Context, string) (bool, error)) *hostflow.Flow {
	t.Helper()
	reg := metrics.New()
	w, err := rpc.NewWrapper(rpc.WrapperOptions{Site: "s", Metrics: reg, Policy: backoff.Policy{Millis: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	d := hostflow.Deps{Helper: h, Metrics: reg, Wrapper: w, Transport: tr}
	if len(presence) > 0 {
		d.Presence = presence[0]
	}
	f, err := hostflow.New(hostflow.Settings{Site: "s", Interval: time.Minute, RestartSplay: 1, Upgrade: up}, d)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var running = rpc.PauseFunc(func() bool { return false })

// The restart is recorded while the configuration is sent (the journal's fsync overlaps that
// round trip), and sent only once the record returned.
func TestFlow_RecordsTheRestartWhileConfiguringAndBeforeSendingIt(t *testing.T) {
	recording, configured := make(chan struct{}), make(chan struct{})
	tr := &script{}
	tr.answer = func(action string) []rpc.Reply {
		if action == "choria_provision#configure" {
			select {
			case <-recording:
			case <-time.After(10 * time.Second):
				tr.note("configure-answered-before-the-record-began")
			}
			defer close(configured)
		}
		return answering("n1")(action)
	}
	f := scriptedFlow(t, tr)
	res := f.Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running, Record: func(_ context.Context, step string) error {
		tr.note("record:" + step)
		close(recording)
		// The write takes as long as the configure call: the restart waits for both.
		select {
		case <-configured:
		case <-time.After(10 * time.Second):
		}
		tr.note("recorded:" + step)
		return nil
	}})
	if res.Outcome != hostflow.Provisioned {
		t.Fatalf("outcome %s (%v)", res.Outcome, res.Err)
	}
	// The record and the configure call start in either order; each waits for the other.
	if got := tr.sent(); got != "rpcutil#inventory record:restart choria_provision#configure recorded:restart choria_provision#restart" &&
		got != "rpcutil#inventory choria_provision#configure record:restart recorded:restart choria_provision#restart" {
		t.Fatalf("sent %q, want the restart recorded during the configure call and sent after the record", got)
	}
}

// A configure call that fails sends no restart, though its record was under way.
func TestFlow_AFailedConfigureSendsNoRestart(t *testing.T) {
	tr := &script{answer: answering("n1", "choria_provision#configure")}
	res := scriptedFlow(t, tr).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running, Record: func(_ context.Context, step string) error {
		tr.note("record:" + step)
		return nil
	}})
	if res.Outcome != hostflow.Failed || res.Step != "configure" {
		t.Fatalf("outcome %s step %s (%v), want failed at configure", res.Outcome, res.Step, res.Err)
	}
	if strings.Contains(tr.sent(), "choria_provision#restart") {
		t.Fatalf("restart sent after a failed configure: %s", tr.sent())
	}
}

func TestFlow_AFailedRecordSendsNoRestart(t *testing.T) {
	tr := &script{answer: answering("n1")}
	f := scriptedFlow(t, tr)
	res := f.Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running, Record: func(context.Context, string) error {
		return errors.New("disk full")
	}})
	// Nothing irreversible was sent: the host is given back (paused), not failed.
	if res.Outcome != hostflow.Paused || res.Step != "restart" || !strings.Contains(res.Err.Error(), "disk full") {
		t.Fatalf("outcome %s step %s (%v), want paused at restart", res.Outcome, res.Step, res.Err)
	}
	if strings.Contains(tr.sent(), "choria_provision#restart") {
		t.Fatalf("restart sent without its record: %s", tr.sent())
	}
}

// Silence at the first call is settled by rediscovery (Unknown naming the step); silence later
// in the flow, from a node that answered before, is a failure.
func TestFlow_UnansweredFirstCallIsUnknown(t *testing.T) {
	tr := &script{answer: answering("n1", "rpcutil#inventory")}
	res := scriptedFlow(t, tr).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running})
	if res.Outcome != hostflow.Unknown || res.Step != "inventory" {
		t.Fatalf("outcome %s step %s (%v), want unknown at inventory", res.Outcome, res.Step, res.Err)
	}
	tr = &script{answer: answering("n1", "choria_provision#configure")}
	res = scriptedFlow(t, tr).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running})
	if res.Outcome != hostflow.Failed || res.Step != "configure" {
		t.Fatalf("outcome %s step %s (%v), want failed at configure", res.Outcome, res.Step, res.Err)
	}
}

// Shutdown and release_update take the node out of provisioning mode as restart does: each is
// recorded before it is sent, and not sent when its record fails.
func TestFlow_RecordsShutdownAndUpgradeBeforeSendingThem(t *testing.T) {
	for _, tc := range []struct {
		name   string
		helper hostflow.Helper
		up     upgrade.Settings
		step   string
		action string
		ok     hostflow.Outcome
	}{
		{"shutdown", helperSays{Shutdown: true, Msg: "rejected"}, upgrade.Settings{}, "shutdown", "choria_provision#shutdown", hostflow.Shutdown},
		{"release_update", helperSays{Upgrade: "0.31.0", Configuration: map[string]string{"a": "b"}}, upgrade.Settings{Enabled: true, Repository: "https://repo.example.net"},
			"release_update", "choria_provision#release_update", hostflow.UpgradeSent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &script{answer: answering("n1")}
			res := scriptedFlowWith(t, tr, tc.helper, tc.up).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running, Record: func(_ context.Context, step string) error {
				tr.note("record:" + step)
				return nil
			}})
			if res.Outcome != tc.ok {
				t.Fatalf("outcome %s (%v), want %s", res.Outcome, res.Err, tc.ok)
			}
			if want := "record:" + tc.step + " " + tc.action; !strings.HasSuffix(tr.sent(), want) {
				t.Fatalf("sent %q, want it to end %q", tr.sent(), want)
			}

			tr = &script{answer: answering("n1")}
			res = scriptedFlowWith(t, tr, tc.helper, tc.up).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running, Record: func(context.Context, string) error {
				return errors.New("disk full")
			}})
			if res.Outcome != hostflow.Paused || strings.Contains(tr.sent(), tc.action) {
				t.Fatalf("with a failing record: outcome %s (%v), sent %q; want paused and no %s", res.Outcome, res.Err, tr.sent(), tc.action)
			}
		})
	}
}

// A restart whose reply was lost to a node that is gone since is the node restarting: the flow
// ends provisioned after one try instead of three reply windows and a confirmation.
func TestFlow_LostRestartReplyOfAGoneNodeIsProvisioned(t *testing.T) {
	tr := &script{answer: answering("n1", "choria_provision#restart")}
	gone := func(context.Context, string) (bool, error) { return false, nil }
	res := scriptedFlowWith(t, tr, configures{}, upgrade.Settings{}, gone).Run(context.Background(), hostflow.Host{Identity: "n1", Pause: running})
	if res.Outcome != hostflow.Provisioned {
		t.Fatalf("outcome %s (%v), want provisioned", res.Outcome, res.Err)
	}
	if n := strings.Count(tr.sent(), "choria_provision#restart"); n != 1 {
		t.Fatalf("restart sent %d times: %s", n, tr.sent())
	}
}
