// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/rpc"
)

func inventory(version string, upgradable bool) *rpc.Inventory {
	return &rpc.Inventory{Version: version, Upgradable: upgradable, Raw: []byte(`{}`)}
}

func configured(upgrade string) *helper.Response {
	return &helper.Response{Upgrade: upgrade, Key: "-----BEGIN PRIVATE KEY----- secret", Certificate: "cert", CA: "ca",
		Configuration: map[string]string{"identity": "n1", "plugin.choria.middleware_hosts": "nats://secret@host:4222"}}
}

// TestDecide_FollowsTheHostFlowsOrder: the decision of every case a run meets, in the host
// flow's order (inventory, helper's defer or shutdown, upgrade, configure).
func TestDecide_FollowsTheHostFlowsOrder(t *testing.T) {
	on := upgrade.Settings{Enabled: true, Repository: "http://repo"}
	cases := []struct {
		name   string
		s      upgrade.Settings
		f      facts
		action Action
		reason string
		from   string
		to     string
	}{
		{"silent node", on, facts{invErr: fmt.Errorf("%w (last attempt: %w)", rpc.ErrMaxTries, &rpc.ResponseCountError{Count: 0})}, Skip, "no reply to rpcutil#inventory", "", ""},
		{"inventory refused", on, facts{invErr: errors.New("rpcutil#inventory failed: boom")}, Fail, "rpcutil#inventory: rpcutil#inventory failed: boom", "", ""},
		{"helper not asked", upgrade.Settings{}, facts{inv: inventory("1.0", true)}, Provision, "plan --helper asks it", "", ""},
		{"helper not asked, upgrade refused", on, facts{inv: inventory("1.0", false)}, Provision, "an upgrade the helper asks for would be refused (does not support upgrades), and the node fails", "", ""},
		{"helper failed", on, facts{inv: inventory("1.0", true), asked: true, helperErr: errors.New("exit status 1")}, Fail, "the helper gave no answer: exit status 1", "", ""},
		{"defer", on, facts{inv: inventory("1.0", true), asked: true, answer: &helper.Response{Defer: true, Msg: "later"}}, Defer, `the helper defers it: "later"`, "", ""},
		{"shutdown without reason", on, facts{inv: inventory("1.0", true), asked: true, answer: &helper.Response{Shutdown: true}}, Shutdown, "shut down, no reason given", "", ""},
		{"upgrade", on, facts{inv: inventory("0.29.4", true), asked: true, answer: configured("0.30.0")}, Upgrade, "release_update from 0.29.4 to 0.30.0", "0.29.4", "0.30.0"},
		{"on target", on, facts{inv: inventory("0.30.0", true), asked: true, answer: configured("0.30.0")}, Provision, "configure 2 keys and restart; already on the helper's upgrade target 0.30.0", "", ""},
		{"upgrade refused", on, facts{inv: inventory("0.29.4", false), asked: true, answer: configured("0.30.0")}, Fail, "cannot upgrade to 0.30.0: does not support upgrades", "", ""},
		{"upgrade refused, optional", upgrade.Settings{Enabled: true, Optional: true}, facts{inv: inventory("", true), asked: true, answer: configured("0.30.0")}, Provision, "cannot upgrade to 0.30.0 (did not receive a version in inventory), configured as it is (upgrades_optional)", "", ""},
		{"no repository", upgrade.Settings{Enabled: true}, facts{inv: inventory("0.29.4", true), asked: true, answer: configured("0.30.0")}, Fail, "upgrades_repository is not configured", "", ""},
		{"upgrades off", upgrade.Settings{}, facts{inv: inventory("0.29.4", true), asked: true, answer: configured("0.30.0")}, Provision, "the helper asks for 0.30.0, but features.upgrades is off", "", ""},
		{"empty configuration", on, facts{inv: inventory("1.0", true), asked: true, answer: &helper.Response{}}, Fail, "configuration is empty", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := decide(c.s, c.f)
			if n.Action != c.action || !strings.Contains(n.Reason, c.reason) || n.From != c.from || n.To != c.to {
				t.Fatalf("got %s %q (from %q to %q), want %s containing %q (from %q to %q)", n.Action, n.Reason, n.From, n.To, c.action, c.reason, c.from, c.to)
			}
		})
	}
}

// TestDecide_ShowsTheHelpersKeysNeverItsValues: the answer names configuration keys and says a
// key and certificate came; no value reaches the plan.
func TestDecide_ShowsTheHelpersKeysNeverItsValues(t *testing.T) {
	n := decide(upgrade.Settings{}, facts{identity: "n1", inv: inventory("1.0", true), asked: true, answer: configured("")})
	a := n.Helper
	if a == nil || !a.Key || !a.Certificate || !a.CA || strings.Join(a.ConfigurationKeys, ",") != "identity,plugin.choria.middleware_hosts" {
		t.Fatalf("answer = %+v", a)
	}
	var b strings.Builder
	r := &Report{Nodes: []Node{n}, Summary: summarize([]Node{n})}
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"secret", "nats://", "BEGIN"} {
		if strings.Contains(b.String(), secret) {
			t.Fatalf("the plan shows %q:\n%s", secret, b.String())
		}
	}
}

// TestDecide_EscapesWhatANodeChose: a version with terminal control characters is shown as text.
func TestDecide_EscapesWhatANodeChose(t *testing.T) {
	n := decide(upgrade.Settings{}, facts{inv: inventory("1.0\x1b[2J", true)})
	if strings.ContainsRune(n.Version, 0x1b) {
		t.Fatalf("version %q carries an escape", n.Version)
	}
}
