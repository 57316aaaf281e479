// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Process is a process this run started that is still alive after it stopped everything.
type Process struct {
	PID     int
	Command string
}

// String is "PID command".
func (p Process) String() string { return fmt.Sprintf("%d %s", p.PID, p.Command) }

// leftovers lists the processes among pids that are alive, and on Linux also every other
// process whose command line names dir: everything this run starts (the edge, its helper, real
// nodes) carries the run directory in its arguments, so this finds grandchildren too.
func leftovers(pids []int, dir string) []Process {
	var out []Process
	// This process and its ancestors (make's shell, say) may name dir too.
	seen := map[int]bool{}
	for _, pid := range ancestry(os.Getpid()) {
		seen[pid] = true
	}
	for _, pid := range pids {
		if seen[pid] || pid <= 0 {
			continue
		}
		seen[pid] = true
		if alive(pid) {
			out = append(out, Process{PID: pid, Command: cmdline(pid)})
		}
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || seen[pid] {
			continue
		}
		if c := cmdline(pid); strings.Contains(c, dir) && alive(pid) {
			out = append(out, Process{PID: pid, Command: c})
		}
	}
	slices.SortFunc(out, func(a, b Process) int { return a.PID - b.PID })
	return out
}

// ancestry is pid and its parents up to init, as far as /proc tells.
func ancestry(pid int) []int {
	var out []int
	for pid > 1 && len(out) < 64 {
		out = append(out, pid)
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			break
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			break
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			break
		}
		if pid, err = strconv.Atoi(fields[1]); err != nil {
			break
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no /proc (not Linux): the signal check is all there is
	}
	// The state follows the parenthesised command name, which may itself contain ") ".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// cmdline is the process's command line with spaces between arguments, "" if unknown.
func cmdline(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}
