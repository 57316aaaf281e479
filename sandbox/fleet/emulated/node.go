// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/choria-io/go-choria/lifecycle"

	"github.com/seed96588659/muster/sandbox/fleet/faults"
)

// mode is where a node is in its life, as the provisioning broker sees it.
type mode int

const (
	// modeProvisioning: connected to the provisioning broker, answering.
	modeProvisioning mode = iota
	// modeAway: temporarily disconnected (fault) or between a restart and the next start.
	modeAway
	// modeProvisioned: restarted into a configuration without provisioning; gone from here.
	modeProvisioned
	// modeShutdown: stopped by choria_provision#shutdown.
	modeShutdown
)

func (m mode) String() string {
	switch m {
	case modeProvisioning:
		return "provisioning"
	case modeAway:
		return "away"
	case modeProvisioned:
		return "provisioned"
	case modeShutdown:
		return "shutdown"
	}
	return "unknown"
}

// configFile is the path the emulated nodes pretend to manage, used in messages as the real agent does.
const configFile = "/etc/choria/server.conf"

// node is one emulated Choria server in provisioning mode. Its own mutex serialises its actions,
// as the real provision agent's process-wide mutex does for a real server.
type node struct {
	fleet    *Fleet
	index    int
	identity string
	fault    faults.Fault
	// twin is the second server with the same identity (duplicate fault); nil otherwise.
	twin *node

	mu          sync.Mutex
	mode        mode
	version     string
	upgradable  bool
	facts       json.RawMessage
	config      map[string]string
	lockedBy    string
	lockedUntil time.Time
	ecdhPrivate []byte
	dropLeft    int
	// failsLeft counts down the injected failures per agent#action; nil without a fail fault.
	failsLeft   map[string]int
	disconnects int
	// restarting: a restart, release_update or shutdown was accepted and the node has not
	// yet gone; choria_provision requests are then not answered (see provisionAction).
	restarting bool
	// epoch changes whenever the node (re)starts, so timers of an older life do nothing.
	epoch int
	// incarnation counts the node's lives in provisioning mode (reset), for the action log; it
	// is read without mu by record.
	incarnation atomic.Int64
	// reentry brings the node back in provisioning mode after a provisioning (the rebuilt or
	// flapping fault, or Fleet.Reenter); reentries counts how often it came back since.
	reentry   *reentry
	reentries int
	// key is the node's own CSR key pair while it has a re-entry fault (nil: the fleet's
	// shared pool); a rebuild drops it, so the next gencsr makes a fresh one.
	key *ownKey
}

// reentry is a node's re-entry fault: a rebuilt node is a new machine each time it comes
// back, a flapping one the same machine.
type reentry struct {
	faults.Reentry
	rebuilt bool
}

// newReentry is the re-entry of fault f, nil without one.
func newReentry(f faults.Fault) *reentry {
	switch {
	case f.Rebuilt != nil:
		return &reentry{Reentry: *f.Rebuilt, rebuilt: true}
	case f.Flapping != nil:
		return &reentry{Reentry: *f.Flapping}
	}
	return nil
}

func newNode(f *Fleet, index int, identity string, fault faults.Fault) (*node, error) {
	n := &node{fleet: f, index: index, identity: identity, fault: fault, reentry: newReentry(fault)}
	if err := n.reset(); err != nil {
		return nil, err
	}
	return n, nil
}

// reset puts the node in the state of a freshly started provisioning-mode server.
func (n *node) reset() error {
	cfg := n.fleet.cfg
	n.mode = modeProvisioning
	n.version = cfg.Version
	if n.fault.Version != "" {
		n.version = n.fault.Version
	}
	n.upgradable = n.fleet.allowUpdate
	if n.fault.Upgradable != nil {
		n.upgradable = *n.fault.Upgradable
	}
	facts := map[string]any{
		"identity":    n.identity,
		"region":      cfg.Region,
		"emulated":    true,
		"fleet_index": n.index,
	}
	maps.Copy(facts, cfg.Facts)
	maps.Copy(facts, n.fault.Facts)
	raw, err := json.Marshal(facts)
	if err != nil {
		return fmt.Errorf("node %s facts: %w", n.identity, err)
	}
	n.facts = raw
	n.config = map[string]string{"plugin.choria.server.provision": "true"}
	n.lockedBy, n.lockedUntil, n.ecdhPrivate = "", time.Time{}, nil
	n.dropLeft = n.fault.DropFirst
	n.failsLeft = nil
	if len(n.fault.Fails) > 0 {
		n.failsLeft = failTotals(n.fault.Fails)
	}
	n.restarting = false
	n.epoch++
	n.incarnation.Add(1)
	return nil
}

// restartLocked ends the node's current life; after delay it either returns in provisioning
// mode (fresh process state, new version) or, when its configuration no longer provisions,
// leaves the provisioning broker for good. Like the real agent's restart it announces the
// shutdown at once, before the splay.
func (n *node) restartLocked(delay time.Duration, newVersion string) {
	if n.restarting {
		return
	}
	n.restarting = true
	n.fleet.publishEvent(n, lifecycle.Shutdown, n.version)
	epoch := n.epoch
	n.fleet.after(delay, func() {
		n.mu.Lock()
		// A process restarts whether or not it is connected (a disconnect fault).
		if n.epoch != epoch || (n.mode != modeProvisioning && n.mode != modeAway) {
			n.mu.Unlock()
			return
		}
		if provisionEnabled(n.config) {
			// Same configuration: the process comes back in provisioning mode.
			cfg := n.config
			if err := n.reset(); err != nil {
				n.fleet.log.Error("restart emulated node", "node", n.identity, "error", err)
			}
			n.config = cfg
			if newVersion != "" {
				n.version = newVersion
			}
			n.mode = modeAway
			epoch := n.epoch
			n.mu.Unlock()
			n.fleet.after(n.fleet.cfg.BootTime, func() { n.comeBack(epoch) })
			return
		}
		n.mode = modeProvisioned
		n.epoch++
		re, epoch := n.reentry, n.epoch
		again := re != nil && n.reentries < re.Times
		n.mu.Unlock()
		n.fleet.provisioned.Add(1)
		if again {
			n.fleet.after(re.After, func() { n.reenter(epoch) })
		}
	})
}

// reenter brings a provisioned node back in provisioning mode, as its re-entry fault says: a
// rebuilt node as a new machine (reinstalled: first version, fresh keys), a flapping one as
// the same machine whose configuration reverted (its version and keys kept).
func (n *node) reenter(epoch int) {
	n.mu.Lock()
	if n.epoch != epoch || n.mode != modeProvisioned || n.reentry == nil {
		n.mu.Unlock()
		return
	}
	version := n.version
	if err := n.reset(); err != nil {
		n.fleet.log.Error("re-enter provisioning mode", "node", n.identity, "error", err)
	}
	n.reentries++
	if n.reentry.rebuilt {
		n.key = nil
	} else {
		n.version = version
	}
	v := n.version
	n.mu.Unlock()
	n.fleet.reentered.Add(1)
	n.fleet.publishEvent(n, lifecycle.Startup, v)
}

// comeBack returns an away node to the broker and announces it as a real server's startup does.
func (n *node) comeBack(epoch int) {
	n.mu.Lock()
	if n.epoch != epoch || n.mode != modeAway {
		n.mu.Unlock()
		return
	}
	n.mode = modeProvisioning
	v := n.version
	n.mu.Unlock()
	n.fleet.publishEvent(n, lifecycle.Startup, v)
}

// disconnectLocked takes the node off the broker, keeping its state, as a lost connection would.
func (n *node) disconnectLocked(d time.Duration) {
	n.mode = modeAway
	n.disconnects++
	if d <= 0 {
		return
	}
	epoch := n.epoch
	n.fleet.after(d, func() {
		n.mu.Lock()
		if n.epoch == epoch && n.mode == modeAway {
			n.mode = modeProvisioning
		}
		n.mu.Unlock()
	})
}

// failTotals is how many failures the fault injects per agent#action.
func failTotals(fails []faults.Fail) map[string]int {
	out := map[string]int{}
	for _, f := range fails {
		out[f.Action] += f.Times
	}
	return out
}

// provisionEnabled reads plugin.choria.server.provision as go-choria's config would.
func provisionEnabled(cfg map[string]string) bool {
	v, ok := cfg["plugin.choria.server.provision"]
	if !ok {
		return false
	}
	b, err := strToBool(v)
	return err == nil && b
}

// strToBool accepts the boolean spellings go-choria's configuration accepts.
func strToBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "yes", "true", "y", "t":
		return true, nil
	case "0", "no", "false", "n", "f":
		return false, nil
	}
	return false, fmt.Errorf("cannot convert string value '%s' into a boolean", strings.TrimSpace(s))
}

// lockFor takes or extends the provisioning lock for sender.caller, as the real agent's lockFor.
func (n *node) lockFor(sender, caller string, now time.Time) bool {
	key := sender + "." + caller
	window := n.fleet.cfg.LockWindow
	if now.Before(n.lockedUntil) {
		if n.lockedBy != key {
			return false
		}
		n.lockedUntil = now.Add(window)
		return true
	}
	n.lockedBy, n.lockedUntil = key, now.Add(window)
	return true
}
