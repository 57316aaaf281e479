// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"fmt"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/realnode"
)

// realReentry is the rebuilt or flapping fault of real node id: of the lab's faults only these
// two apply to real nodes, by identity or glob (an index selects emulated nodes only). nil when
// the node has neither.
func (o Options) realReentry(region, id string) (re *faults.Reentry, rebuilt bool) {
	f := o.Faults.For(region, id, -1)
	return f.Reentry(), f.Rebuilt != nil
}

// superviseReentries starts, for every real node that started with a rebuilt or flapping fault,
// the supervisor that brings it back in provisioning mode after its provisionings.
func (r *Region) superviseReentries() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.real {
		if _, bad := r.failed[n.identity]; bad || n.cmd == nil {
			continue
		}
		re, rebuilt := r.lab.opts.realReentry(r.name, n.identity)
		if re == nil {
			continue
		}
		r.supervisors.Add(1)
		go func() {
			defer r.supervisors.Done()
			r.supervise(n, *re, rebuilt)
		}()
	}
}

// supervise waits, re.Times times, until n runs provisioned, then re.After, then brings it back
// in provisioning mode; it ends early with the region's nodes or when a step fails (logged).
func (r *Region) supervise(n *realNode, re faults.Reentry, rebuilt bool) {
	log := r.lab.opts.Logger.With("region", r.name, "node", n.identity)
	for k := 1; k <= re.Times; k++ {
		_, err := r.WaitNodeStatus(r.life, n.identity, func(st realnode.Status) bool {
			return st.PID == n.pid() && st.Connected && !st.Provisioning
		})
		if err != nil {
			return
		}
		select {
		case <-r.life.Done():
			return
		case <-time.After(re.After):
		}
		if err := r.reenterReal(n, rebuilt); err != nil {
			if r.life.Err() == nil {
				log.Error("real node could not come back in provisioning mode", "error", err)
			}
			return
		}
		log.Info("real node back in provisioning mode", "rebuilt", rebuilt, "time", k)
	}
}

// reenterReal stops n and starts it again in provisioning mode: rebuilt, as a new machine from
// its first binary (keys, certificate and configuration gone); else as the same machine whose
// configuration reverted. It returns once the node is connected again.
func (r *Region) reenterReal(n *realNode, rebuilt bool) error {
	if err := n.stop(10 * time.Second); err != nil {
		return err
	}
	if rebuilt {
		if err := realnode.Wipe(n.dir); err != nil {
			return err
		}
		bin, err := realnode.Prepare(realnode.Layout{
			Dir:    n.dir,
			Spec:   realnode.Spec{Identity: n.identity, Region: r.name, ActionsFile: r.lab.ActionsFile(), Version: n.version, RecordDiscovery: r.lab.opts.RecordDiscovery},
			JWT:    r.jwt,
			Binary: n.source,
		})
		if err != nil {
			return err
		}
		n.bin = bin
	} else if err := realnode.Revert(n.dir, n.identity); err != nil {
		return err
	}
	// The process is replaced under mu: NodeExited reads it there.
	r.mu.Lock()
	if r.life.Err() != nil {
		r.mu.Unlock()
		return fmt.Errorf("region %s stopping", r.name)
	}
	err := n.start()
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return n.waitConnected(r.life, r.lab.opts.StartTimeout)
}
