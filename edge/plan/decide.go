// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"errors"
	"fmt"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/rpc"
)

// facts are what a plan learnt of one node: its inventory (or why none), and the helper's answer
// (or why none) when the helper was asked.
type facts struct {
	identity  string
	inv       *rpc.Inventory
	invErr    error
	asked     bool
	answer    *helper.Response
	helperErr error
}

// decide is the host flow's decision for one node, in its order (inventory, helper: defer or
// shutdown, upgrade, configure), without a call that acts.
func decide(s upgrade.Settings, f facts) Node {
	n := Node{Identity: f.identity}
	if f.invErr != nil {
		if silent(f.invErr) {
			n.Action, n.Reason = Skip, "no reply to rpcutil#inventory: it left provisioning mode since discovery, or answers too slowly (a run asks again at the next sweep)"
		} else {
			n.Action, n.Reason = Fail, "rpcutil#inventory: "+api.Printable(f.invErr.Error())
		}
		return n
	}
	n.Version, n.Upgradable = api.Printable(f.inv.Version), f.inv.Upgradable
	inv := upgrade.Inventory{Version: f.inv.Version, Upgradable: f.inv.Upgradable}
	if !f.asked {
		n.Action, n.Reason = Provision, "the helper decides whether it is configured, deferred or shut down (plan --helper asks it)"
		if s.Enabled {
			// The refusals do not depend on the helper's target.
			if _, err := upgrade.Needed(s, inv, ""); err != nil {
				n.Reason += "; an upgrade the helper asks for " + refused(s, err)
			}
		}
		return n
	}
	if f.helperErr != nil {
		n.Helper = &Answer{ConfigurationKeys: []string{}, Error: api.Printable(f.helperErr.Error())}
		n.Action, n.Reason = Fail, "the helper gave no answer: "+n.Helper.Error
		return n
	}
	n.Helper = answerOf(f.answer)
	switch {
	case f.answer.Defer:
		n.Action, n.Reason = Defer, said("the helper defers it", n.Helper.Msg)
		return n
	case f.answer.Shutdown:
		n.Action, n.Reason = Shutdown, said("the helper has it shut down", n.Helper.Msg)
		return n
	}
	note := ""
	if target := f.answer.Upgrade; target != "" {
		if !s.Enabled {
			note = fmt.Sprintf("; the helper asks for %s, but features.upgrades is off", n.Helper.Upgrade)
		} else {
			need, err := upgrade.Needed(s, inv, target)
			switch {
			case err != nil && !s.Optional:
				n.Action, n.Reason = Fail, fmt.Sprintf("cannot upgrade to %s: %s", n.Helper.Upgrade, err)
				return n
			case err != nil:
				note = fmt.Sprintf("; cannot upgrade to %s (%s), configured as it is (upgrades_optional)", n.Helper.Upgrade, err)
			case need:
				n.Action, n.From, n.To = Upgrade, n.Version, n.Helper.Upgrade
				n.Reason = fmt.Sprintf("release_update from %s to %s; provisioned once it answers again on %s", n.Version, n.Helper.Upgrade, n.Helper.Upgrade)
				return n
			default:
				note = fmt.Sprintf("; already on the helper's upgrade target %s", n.Helper.Upgrade)
			}
		}
	}
	if len(f.answer.Configuration) == 0 {
		n.Action, n.Reason = Fail, "the helper's configuration is empty, which configure refuses"+note
		return n
	}
	n.Action, n.Reason = Provision, fmt.Sprintf("configure %d keys and restart%s", len(f.answer.Configuration), note)
	return n
}

// refused says what becomes of an upgrade refused with err.
func refused(s upgrade.Settings, err error) string {
	if s.Optional {
		return fmt.Sprintf("would be refused (%s), and it is configured as it is (upgrades_optional)", err)
	}
	return fmt.Sprintf("would be refused (%s), and the node fails", err)
}

// said is what with the helper's message, or a note that it gave none.
func said(what, msg string) string {
	if msg == "" {
		return what + ", no reason given"
	}
	return fmt.Sprintf("%s: %q", what, msg)
}

// silent is true when every try ended without a reply: what a node that left provisioning mode
// since it was discovered looks like (the host flow's own test of its first call).
func silent(err error) bool {
	var rc *rpc.ResponseCountError
	return errors.Is(err, rpc.ErrMaxTries) && errors.As(err, &rc) && rc.Count == 0
}
