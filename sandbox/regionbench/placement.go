// SPDX-License-Identifier: Apache-2.0

package regionbench

import (
	"fmt"
	"os"

	"github.com/seed96588659/muster/sandbox/chaos"
	"github.com/seed96588659/muster/sandbox/internal/procstat"
)

// placement is which CPUs the fleet and the coordinator members run on. In a deployment the
// members are machines of their own; on one small machine they would take their CPU from the
// fleet's emulated nodes and brokers and the edges, and the benchmark would measure how the
// machine is shared instead of whether the cluster holds the edges back. "split" (the default
// with two CPUs or more) gives the benchmark process (lab, edges, link proxies) the first half of
// the CPUs in every run, standalone too, and the members the other half; "shared" lets every
// process run anywhere (MUSTER_BENCH_PLACEMENT).
type placement struct {
	name           string
	fleet, members []int
}

// placementFromEnv reads MUSTER_BENCH_PLACEMENT against the CPUs this process may use.
func placementFromEnv() (placement, error) {
	cpus, err := procstat.CPUs(os.Getpid())
	if err != nil {
		return placement{}, err
	}
	switch v := os.Getenv("MUSTER_BENCH_PLACEMENT"); {
	case v == "shared" || (v == "" && len(cpus) < 2):
		return placement{name: "shared"}, nil
	case v == "split" || v == "":
		if len(cpus) < 2 {
			return placement{}, fmt.Errorf("MUSTER_BENCH_PLACEMENT=split needs two CPUs; this process may use %v", cpus)
		}
		half := len(cpus) / 2
		return placement{name: "split", fleet: cpus[:half], members: cpus[half:]}, nil
	default:
		return placement{}, fmt.Errorf("MUSTER_BENCH_PLACEMENT=%q: want split or shared", v)
	}
}

// placeFleet pins this process, whose threads run the lab and the edges; what it starts later
// inherits its CPUs until placed otherwise.
func (p placement) placeFleet() error {
	if p.fleet == nil {
		return nil
	}
	return procstat.Pin(os.Getpid(), p.fleet...)
}

// placeMembers pins every running member of c.
func (p placement) placeMembers(c *chaos.Cluster) error {
	if p.members == nil {
		return nil
	}
	for _, m := range c.Members {
		if !m.Running() {
			continue
		}
		if err := procstat.Pin(m.PID(), p.members...); err != nil {
			return fmt.Errorf("place member %s: %w", m.ID, err)
		}
	}
	return nil
}

func (p placement) String() string {
	if p.fleet == nil {
		return p.name + ": every process on every CPU"
	}
	return fmt.Sprintf("%s: lab and edges on CPUs %v, members on CPUs %v", p.name, p.fleet, p.members)
}
