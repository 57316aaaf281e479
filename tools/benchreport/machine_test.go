// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"testing"
	"testing/fstest"
)

func TestReadMachine(t *testing.T) {
	proc := fstest.MapFS{
		"cpuinfo":              {Data: []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n")},
		"meminfo":              {Data: []byte("MemTotal:       24591056 kB\nMemFree:        20000000 kB\n")},
		"sys/kernel/osrelease": {Data: []byte("6.1.0-27-cloud-amd64\n")},
		"loadavg":              {Data: []byte("0.52 0.61 1.20 2/345 6789\n")},
	}
	m, err := ReadMachine(proc, 2, "go1.26.0")
	if err != nil {
		t.Fatal(err)
	}
	want := Machine{CPU: "AMD EPYC 7B13", Cores: 2, Memory: 24591056 * 1024, Go: "go1.26.0", Kernel: "Linux 6.1.0-27-cloud-amd64"}
	if m != want {
		t.Errorf("machine %+v, want %+v", m, want)
	}
	load, err := ReadLoad(proc)
	if err != nil || load != "0.52 0.61 1.20" {
		t.Errorf("load %q, %v; want the three averages", load, err)
	}
}

func TestReadMachine_CPUWithoutModelName(t *testing.T) {
	proc := fstest.MapFS{
		"cpuinfo":              {Data: []byte("processor\t: 0\nBogoMIPS\t: 50.00\n")},
		"meminfo":              {Data: []byte("MemTotal: 1024 kB\n")},
		"sys/kernel/osrelease": {Data: []byte("6.1.0\n")},
	}
	m, err := ReadMachine(proc, 4, "go1.26.0")
	if err != nil {
		t.Fatal(err)
	}
	if m.CPU != "unknown" {
		t.Errorf("CPU %q, want unknown", m.CPU)
	}
}
