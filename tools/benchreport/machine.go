// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Machine is what the figures were measured on.
type Machine struct {
	CPU    string
	Cores  int
	Memory int64 // bytes
	Go     string
	Kernel string
}

// ReadMachine reads the CPU model, the memory and the kernel from proc (a view of /proc); cores
// and goVersion come from the caller, who knows which go runs the benchmarks.
func ReadMachine(proc fs.FS, cores int, goVersion string) (Machine, error) {
	m := Machine{Cores: cores, Go: goVersion}
	cpuinfo, err := fs.ReadFile(proc, "cpuinfo")
	if err != nil {
		return m, fmt.Errorf("read cpuinfo: %w", err)
	}
	// x86 names the model "model name"; arm64 kernels may only give "Hardware" or nothing.
	m.CPU = firstField(cpuinfo, "model name", "Hardware")
	if m.CPU == "" {
		m.CPU = "unknown"
	}
	meminfo, err := fs.ReadFile(proc, "meminfo")
	if err != nil {
		return m, fmt.Errorf("read meminfo: %w", err)
	}
	total := strings.TrimSuffix(firstField(meminfo, "MemTotal"), " kB")
	kb, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return m, fmt.Errorf("meminfo MemTotal %q: %w", total, err)
	}
	m.Memory = kb * 1024
	release, err := fs.ReadFile(proc, "sys/kernel/osrelease")
	if err != nil {
		return m, fmt.Errorf("read kernel release: %w", err)
	}
	m.Kernel = "Linux " + strings.TrimSpace(string(release))
	return m, nil
}

// ReadLoad is the load average over 1, 5 and 15 minutes, as /proc/loadavg prints it.
func ReadLoad(proc fs.FS) (string, error) {
	data, err := fs.ReadFile(proc, "loadavg")
	if err != nil {
		return "", fmt.Errorf("read loadavg: %w", err)
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "", fmt.Errorf("loadavg %q: want three averages", data)
	}
	return strings.Join(f[:3], " "), nil
}

// firstField is the value of the first "key : value" line whose key is one of keys.
func firstField(data []byte, keys ...string) string {
	for _, key := range keys {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}
