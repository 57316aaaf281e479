// SPDX-License-Identifier: Apache-2.0

// Package procstat reads what the kernel counts of a process (CPU, resident memory) for the
// benchmarks that compare processes: Linux's /proc, and getrusage for the benchmark itself.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of the CPU times in /proc/PID/stat on every
// architecture Go supports there.
const clockTick = 100

// Usage is a process's CPU and memory as the kernel counts them at one moment.
type Usage struct {
	// Self is the process's own user+system CPU, without any child's.
	Self time.Duration
	// Children is the user+system CPU of the children it has waited for (forked helpers).
	Children time.Duration
	// PeakRSS is VmHWM, the resident set's high-water mark.
	PeakRSS int64
}

// Read reads /proc/PID/stat and /proc/PID/status of a running process.
func Read(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read stat of pid %d: %w", pid, err)
	}
	// The command name (field 2) may hold spaces and parentheses: fields are counted after its
	// last ')'.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return Usage{}, fmt.Errorf("stat of pid %d: no ')' after the command name", pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is field 3 (state); utime, stime, cutime, cstime are fields 14-17.
	if len(fields) < 15 {
		return Usage{}, fmt.Errorf("stat of pid %d: %d fields after the command name, want at least 15", pid, len(fields))
	}
	var ticks [4]int64
	for i := range ticks {
		if ticks[i], err = strconv.ParseInt(fields[11+i], 10, 64); err != nil {
			return Usage{}, fmt.Errorf("stat of pid %d: field %d: %w", pid, 14+i, err)
		}
	}
	tick := time.Second / clockTick
	u := Usage{
		Self:     time.Duration(ticks[0]+ticks[1]) * tick,
		Children: time.Duration(ticks[2]+ticks[3]) * tick,
	}
	u.PeakRSS, err = readHWM(pid)
	return u, err
}

// readHWM returns VmHWM of /proc/PID/status in bytes.
func readHWM(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("status of pid %d: VmHWM %q: %w", pid, rest, err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read status of pid %d: %w", pid, err)
	}
	return 0, fmt.Errorf("status of pid %d has no VmHWM line", pid)
}
