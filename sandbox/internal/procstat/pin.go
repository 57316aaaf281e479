// SPDX-License-Identifier: Apache-2.0

package procstat

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pin restricts every thread of process pid to the CPUs listed. Linux sets affinity per thread
// and a new thread inherits its creator's, so Pin walks /proc/PID/task until a pass finds no
// thread it had not pinned: threads started meanwhile are pinned too, and later ones inherit.
func Pin(pid int, cpus ...int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("pin pid %d: no CPU named", pid)
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	pinned := map[int]bool{}
	for {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return fmt.Errorf("pin pid %d: %w", pid, err)
		}
		fresh := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || pinned[tid] {
				continue
			}
			// A thread that ended since the listing is gone, not a failure.
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin thread %d of pid %d to CPUs %v: %w", tid, pid, cpus, err)
			}
			pinned[tid] = true
			fresh++
		}
		if fresh == 0 {
			return nil
		}
	}
}

// CPUs is the CPUs process pid may run on.
func CPUs(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("affinity of pid %d: %w", pid, err)
	}
	var out []int
	for c := range 1024 {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}
