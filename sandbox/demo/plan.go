// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
)

// Expect is how a node of the plan should end.
type Expect int

// What the plan expects of a node.
const (
	// Healthy nodes are provisioned at once.
	Healthy Expect = iota + 1
	// Upgrade nodes report OldVersion: the edge sends release_update, then provisions them
	// when they come back.
	Upgrade
	// FailConfigure nodes refuse every configure: the edge fails them.
	FailConfigure
	// Duplicate identities answer twice: the edge refuses the replies and reports the second
	// responder, for which the coordinators hold the node until an operator approves or bans it.
	Duplicate
	// Deferred nodes are deferred by the helper.
	Deferred
	// ShutDown nodes are shut down on the helper's word.
	ShutDown
	// Silent nodes never answer, so the edge never finds them.
	Silent
	// Flapping nodes come back in provisioning mode after every provisioning: the coordinators
	// provision them again once, then hold them (approval.flapping, flappingPolicy).
	Flapping
)

// The first region's flapping node: it comes back flappingAfter after each provisioning, up to
// flappingTimes times; the coordinators hold it at its flappingCount-th return within an hour.
// flappingAfter is past the demo's lease.reprovision_after, so each return is a sighting the
// ledger counts, not one it ignores as too soon.
const (
	flappingAfter  = 4 * time.Second
	flappingTimes  = 2
	flappingCount  = 2
	flappingPolicy = "2/1h"
)

// Expectations in the order summaries list them.
func expectations() []Expect {
	return []Expect{Healthy, Upgrade, FailConfigure, Duplicate, Deferred, ShutDown, Silent, Flapping}
}

// String describes the expectation in the summary.
func (e Expect) String() string {
	switch e {
	case Healthy:
		return "healthy: provisioned"
	case Upgrade:
		return "older version: upgraded, then provisioned"
	case FailConfigure:
		return "configure always fails: failed"
	case Duplicate:
		return "duplicate identity: held for approval"
	case Deferred:
		return "helper defers: deferred"
	case ShutDown:
		return "helper shuts down: shut down"
	case Silent:
		return "silent: never discovered"
	case Flapping:
		return "flapping: provisioned again once, then held for approval"
	}
	return fmt.Sprintf("Expect(%d)", int(e))
}

// plan is the lab's fleet and what should become of each node.
type plan struct {
	region       string
	nodes        []string // every identity, sorted
	expect       map[string]Expect
	faults       *faults.Set
	realVersions []string
	deferRE      string
	shutdownRE   string
}

// newPlan lays out real nodes (every other one on OldVersion, starting with the first) and
// emulated ones: the last five are faulty (silent, failing configure, duplicate, deferred, shut
// down), with flapping the one before them flaps, and a handful spread over the rest report
// OldVersion.
func newPlan(region string, real, emulated int, flapping bool) *plan {
	p := &plan{region: region, expect: map[string]Expect{}}
	for i := 1; i <= real; i++ {
		id := lab.RealIdentity(region, i)
		v, e := TargetVersion, Healthy
		if i%2 == 1 {
			v, e = OldVersion, Upgrade
		}
		p.realVersions = append(p.realVersions, v)
		p.expect[id] = e
	}
	emu := func(i int) string { return fmt.Sprintf("%s%05d", lab.EmulatedPrefix(region), i) }
	for i := range emulated {
		p.expect[emu(i)] = Healthy
	}
	var rules []faults.Rule
	add := func(i int, e Expect, f faults.Fault) {
		id := emu(i)
		p.expect[id] = e
		if !f.IsZero() {
			rules = append(rules, faults.Rule{Select: faults.Selector{Identity: id}, Fault: f, Source: "demo plan: " + e.String()})
		}
	}
	add(emulated-1, Silent, faults.Fault{Silent: true})
	add(emulated-2, FailConfigure, faults.Fault{Fails: []faults.Fail{{Action: "choria_provision#configure", Times: 1 << 30, Message: "demo: this node refuses every configuration"}}})
	add(emulated-3, Duplicate, faults.Fault{Duplicate: true})
	add(emulated-4, Deferred, faults.Fault{})
	add(emulated-5, ShutDown, faults.Fault{})
	p.deferRE = "^" + regexp.QuoteMeta(emu(emulated-4)) + "$"
	p.shutdownRE = "^" + regexp.QuoteMeta(emu(emulated-5)) + "$"
	faulty := 5
	if flapping {
		faulty++
		add(emulated-6, Flapping, faults.Fault{Flapping: &faults.Reentry{After: flappingAfter, Times: flappingTimes}})
	}
	// About one in fifty, at least three, spread over the healthy part of the fleet.
	healthy := emulated - faulty
	outdated := max(3, healthy/50)
	for k := range outdated {
		add(k*healthy/outdated, Upgrade, faults.Fault{Version: OldVersion})
	}
	p.faults = faults.NewSet(rules...)
	for id := range p.expect {
		p.nodes = append(p.nodes, id)
	}
	slices.Sort(p.nodes)
	return p
}

// count is how many nodes the plan gives expectation e.
func (p *plan) count(e Expect) int {
	n := 0
	for _, x := range p.expect {
		if x == e {
			n++
		}
	}
	return n
}

// succeed is how many nodes should end provisioned.
func (p *plan) succeed() int { return p.count(Healthy) + p.count(Upgrade) }

// drop removes a node from the plan (it did not start).
func (p *plan) drop(id string) {
	delete(p.expect, id)
	p.nodes = slices.DeleteFunc(p.nodes, func(n string) bool { return n == id })
}
