// SPDX-License-Identifier: Apache-2.0

// Package faults describes how individual emulated Choria nodes misbehave: silence, a twin with
// the same identity, failing actions, delays, dropped requests, a mid-flow disconnect and the
// version, upgradable flag and facts they report, and nodes that come back in provisioning mode
// after they were provisioned (rebuilt, flapping; these two also reach real nodes, see
// sandbox/fleet/lab). Rules come from a YAML file or from flags.
package faults

import (
	"maps"
	"slices"
	"time"
)

// Fail makes a node answer an action with a not-OK status a number of times.
type Fail struct {
	// Action is agent#action, e.g. choria_provision#configure.
	Action string
	// Times is how many requests for Action fail before the node behaves normally again.
	Times int
	// Message is the status message of the failed replies.
	Message string
}

// Disconnect makes a node vanish from the broker after it has answered an action.
type Disconnect struct {
	// After is the agent#action whose reply is the node's last before it goes away.
	After string
	// For is how long it stays away; zero means for good.
	For time.Duration
}

// Reentry makes a provisioned node come back in provisioning mode: After its provisioning
// restart it is away for After, then starts again in provisioning mode, at most Times times.
type Reentry struct {
	// After is how long the node stays provisioned before it is back in provisioning mode.
	After time.Duration
	// Times bounds how often the node comes back; at least 1.
	Times int
}

// Defaults of the two re-entry faults.
const (
	// DefaultRebuiltAfter is how long a rebuilt node stays provisioned: past the coordinators'
	// default lease.reprovision_after (30s), so its startup event queues it again at once, as a
	// machine reinstalled a while later would be. Sooner, a coordinator leaves it alone until
	// that guard has passed and a later discovery sweep finds it; a standalone edge queues it on
	// its startup event whenever it comes.
	DefaultRebuiltAfter = 40 * time.Second
	// DefaultRebuiltTimes: a rebuild happens once.
	DefaultRebuiltTimes = 1
	// DefaultFlappingAfter is the small delay a flapping node stays provisioned.
	DefaultFlappingAfter = 2 * time.Second
	// DefaultFlappingTimes bounds a flapping node, so that a test ends: it is provisioned
	// DefaultFlappingTimes+1 times in all.
	DefaultFlappingTimes = 3
)

// DefaultRebuilt is the rebuilt fault with its defaults.
func DefaultRebuilt() Reentry { return Reentry{After: DefaultRebuiltAfter, Times: DefaultRebuiltTimes} }

// DefaultFlapping is the flapping fault with its defaults.
func DefaultFlapping() Reentry {
	return Reentry{After: DefaultFlappingAfter, Times: DefaultFlappingTimes}
}

// Fault is everything that is unusual about one node; the zero value is a healthy node.
type Fault struct {
	// Silent nodes never answer anything, discovery included.
	Silent bool
	// Duplicate adds a second node with the same identity and its own state: every request
	// that reaches one reaches both, so callers see two answers.
	Duplicate bool
	// Fails lists actions that answer not-OK a number of times.
	Fails []Fail
	// Delay is added before every reply (of the actions in DelayActions when it is not empty).
	Delay time.Duration
	// DelayActions limits Delay to these agent#action names.
	DelayActions []string
	// Only, when not empty, lists the agent#action names the node answers; it ignores every
	// other request, discovery included: a rogue that answers only what gains it something.
	Only []string
	// DropFirst requests (of any kind, discovery included) are ignored before the node answers.
	DropFirst int
	// Disconnect, when set, makes the node go away in the middle of a provisioning flow.
	Disconnect *Disconnect
	// Version overrides the version the node reports; empty keeps the fleet's version.
	Version string
	// Upgradable overrides rpcutil#inventory's upgradable flag when not nil.
	Upgradable *bool
	// Facts are merged over the node's default facts.
	Facts map[string]any
	// Rebuilt: once provisioned (its restart accepted), the node comes back in provisioning
	// mode as a new machine with the same identity: its provisioned state is cleared and it
	// presents a fresh key pair (a gencsr's public key differs from every earlier one).
	Rebuilt *Reentry
	// Flapping: the node comes back in provisioning mode after every provisioning restart (its
	// configuration keeps reverting), keeping its key pair: the same machine again and again.
	Flapping *Reentry
}

// IsZero reports whether the fault leaves the node healthy and default.
func (f Fault) IsZero() bool {
	return !f.Silent && !f.Duplicate && len(f.Fails) == 0 && f.Delay == 0 && len(f.Only) == 0 && f.DropFirst == 0 &&
		f.Disconnect == nil && f.Version == "" && f.Upgradable == nil && len(f.Facts) == 0 &&
		f.Rebuilt == nil && f.Flapping == nil
}

// Reentry is the node's re-entry fault (Rebuilt or Flapping), nil when it has none.
func (f Fault) Reentry() *Reentry {
	if f.Rebuilt != nil {
		return f.Rebuilt
	}
	return f.Flapping
}

// Ignores is true when Only leaves action unanswered.
func (f Fault) Ignores(action string) bool {
	return len(f.Only) > 0 && !slices.Contains(f.Only, action)
}

// DelayFor is the delay before replying to action.
func (f Fault) DelayFor(action string) time.Duration {
	if len(f.DelayActions) == 0 || slices.Contains(f.DelayActions, action) {
		return f.Delay
	}
	return 0
}

// merge lays o over f: set scalar fields of o win, lists are appended and facts merged.
func (f Fault) merge(o Fault) Fault {
	out := f
	out.Silent = f.Silent || o.Silent
	out.Duplicate = f.Duplicate || o.Duplicate
	out.Fails = append(append([]Fail(nil), f.Fails...), o.Fails...)
	if o.Delay != 0 {
		out.Delay = o.Delay
		out.DelayActions = append([]string(nil), o.DelayActions...)
	}
	out.Only = append(append([]string(nil), f.Only...), o.Only...)
	if o.DropFirst != 0 {
		out.DropFirst = o.DropFirst
	}
	if o.Disconnect != nil {
		d := *o.Disconnect
		out.Disconnect = &d
	}
	if o.Version != "" {
		out.Version = o.Version
	}
	if o.Upgradable != nil {
		u := *o.Upgradable
		out.Upgradable = &u
	}
	// A node is rebuilt or flapping, not both: the later rule's choice wins.
	if o.Rebuilt != nil {
		r := *o.Rebuilt
		out.Rebuilt, out.Flapping = &r, nil
	}
	if o.Flapping != nil {
		r := *o.Flapping
		out.Flapping, out.Rebuilt = &r, nil
	}
	if len(o.Facts) > 0 {
		out.Facts = make(map[string]any, len(f.Facts)+len(o.Facts))
		maps.Copy(out.Facts, f.Facts)
		maps.Copy(out.Facts, o.Facts)
	}
	return out
}
