// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goodYAML = `# a lab's faults
faults:
  - glob: "emu-0000[0-1]"
    silent: true
  - index: 5-6
    region: eu
    duplicate: true
  - identity: emu-00010
    fail:
      - action: configure
        times: 2
        message: disk full
  - index: 11
    slow: 1500ms
    slow_actions: [inventory]
  - index: 12
    drop_first: 3
  - index: 13
    disconnect: {after: gencsr, for: 30s}
  - index: 14
    version: 0.29.4
    upgradable: false
    facts:
      os: {family: RedHat}
  - index: 14
    facts: {rack: r7}
`

func TestParse_AllFaultKindsApplyToTheirNodes(t *testing.T) {
	set, err := Parse([]byte(goodYAML), "faults.yaml")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if got := set.For("eu", "emu-00001", 1); !got.Silent {
		t.Errorf("emu-00001 should be silent: %+v", got)
	}
	if got := set.For("eu", "emu-00002", 2); !got.IsZero() {
		t.Errorf("emu-00002 should be healthy: %+v", got)
	}
	if got := set.For("eu", "emu-00005", 5); !got.Duplicate {
		t.Errorf("emu-00005 in eu should be duplicated")
	}
	if got := set.For("us", "emu-00005", 5); got.Duplicate {
		t.Errorf("region filter ignored: emu-00005 in us duplicated")
	}
	f := set.For("eu", "emu-00010", 10)
	if len(f.Fails) != 1 || f.Fails[0] != (Fail{Action: "choria_provision#configure", Times: 2, Message: "disk full"}) {
		t.Errorf("fails = %+v", f.Fails)
	}
	f = set.For("eu", "emu-00011", 11)
	if f.DelayFor("rpcutil#inventory") != 1500*time.Millisecond || f.DelayFor("choria_provision#configure") != 0 {
		t.Errorf("delay = %v for %v", f.Delay, f.DelayActions)
	}
	if got := set.For("eu", "x", 12).DropFirst; got != 3 {
		t.Errorf("drop_first = %d", got)
	}
	if d := set.For("eu", "x", 13).Disconnect; d == nil || d.After != "choria_provision#gencsr" || d.For != 30*time.Second {
		t.Errorf("disconnect = %+v", d)
	}
	f = set.For("eu", "x", 14)
	if f.Version != "0.29.4" || f.Upgradable == nil || *f.Upgradable || f.Facts["rack"] != "r7" || f.Facts["os"] == nil {
		t.Errorf("version/upgradable/facts = %q %v %v", f.Version, f.Upgradable, f.Facts)
	}
}

func TestParse_MalformedFileNamesTheLine(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", "faults:\n  - index: 1\n    silnet: true\n", "f.yaml:3: unknown field \"silnet\""},
		{"no selector", "faults:\n  - silent: true\n", "f.yaml:2: fault rule needs exactly one of identity, glob or index"},
		{"two selectors", "- index: 1\n  glob: a*\n", "f.yaml:1: fault rule needs exactly one"},
		{"bad duration", "- index: 1\n  slow: fast\n", "f.yaml:2: slow: want a positive duration"},
		{"bad action", "- index: 1\n  fail:\n    - action: explode\n      times: 1\n", "f.yaml:3: action: unknown action \"explode\""},
		{"bad times", "- index: 1\n  fail:\n    - {action: jwt, times: 0}\n", "f.yaml:3: times: want a positive integer"},
		{"bad index", "- index: 9-2\n  silent: true\n", "f.yaml:1: index \"9-2\": range end is before its start"},
		{"bad bool", "- index: 1\n  silent: maybe\n", "f.yaml:2: silent: want true or false"},
		{"unknown top", "fault:\n  - index: 1\n", "f.yaml:1: unknown top-level field \"fault\""},
		{"disconnect field", "- index: 1\n  disconnect: {after: jwt, when: 1s}\n", "f.yaml:2: unknown field \"when\" in disconnect"},
		{"syntax", "- index: 1\n  silent: [true\n", "f.yaml: yaml: line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "f.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestParseFile_ReadsFromDisk(t *testing.T) {
	p := filepath.Join(t.TempDir(), "faults.yaml")
	if err := os.WriteFile(p, []byte("- identity: a\n  silent: true\n  extra: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(p)
	if err == nil || !strings.Contains(err.Error(), p+":3: unknown field \"extra\"") {
		t.Fatalf("error = %v", err)
	}
}

func TestParseFlags_EveryItem(t *testing.T) {
	set, err := ParseFlags([]string{
		"index=0-1:silent",
		"region=us/identity=n7:duplicate,fail=configure/2/boom,slow=2s@inventory+jwt,drop=1",
		"glob=n*:disconnect=restart/10s,version=1.2.3,upgradable=true,fact.rack=r1",
	})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if !set.For("eu", "z", 1).Silent || set.For("eu", "z", 2).Silent {
		t.Errorf("index range wrong")
	}
	f := set.For("us", "n7", 99)
	if !f.Duplicate || f.DropFirst != 1 || len(f.Fails) != 1 || f.Fails[0].Message != "boom" ||
		f.DelayFor("choria_provision#jwt") != 2*time.Second || f.Disconnect == nil || f.Disconnect.For != 10*time.Second ||
		f.Version != "1.2.3" || f.Upgradable == nil || !*f.Upgradable || f.Facts["rack"] != "r1" {
		t.Errorf("fault = %+v", f)
	}
	if set.For("eu", "n7", 99).Duplicate {
		t.Errorf("region ignored")
	}
}

func TestParseFlags_ErrorsNameTheFlag(t *testing.T) {
	cases := map[string]string{
		"index=1":                    "want SELECTOR:ITEM",
		"host=a:silent":              "unknown kind \"host\"",
		"index=1:silnet":             "item \"silnet\": unknown item",
		"index=1:fail=configure":     "want fail=ACTION/K",
		"index=1:fail=explode/1":     "unknown action \"explode\"",
		"index=1:slow=soon":          "duration \"soon\"",
		"index=1:drop=-1":            "want a positive integer",
		"glob=[:silent":              "glob",
		"index=1:upgradable=perhaps": "want true or false",
	}
	for flag, want := range cases {
		_, err := ParseFlags([]string{flag})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--fault \""+flag+"\"") {
			t.Errorf("flag %q: error = %v, want it to name the flag and contain %q", flag, err, want)
		}
	}
}

func TestNilSet_HasNoFaults(t *testing.T) {
	var s *Set
	if !s.For("eu", "a", 0).IsZero() {
		t.Fatal("nil set produced a fault")
	}
}

func TestParseFile_ExampleDocumentsEveryField(t *testing.T) {
	set, err := ParseFile("testdata/example.yaml")
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	if n := len(set.Rules()); n != 9 {
		t.Fatalf("example has %d rules, want 9", n)
	}
	f := set.For("eu", "emu-eu-00015", 15)
	if f.Version != "0.28.0" || f.Upgradable == nil || *f.Upgradable || f.Facts["rack"] != "r7" {
		t.Fatalf("index 15: %+v", f)
	}
	if r := set.For("eu", "emu-eu-00020", 20).Rebuilt; r == nil || r.After != DefaultRebuiltAfter {
		t.Fatalf("emu-eu-00020 rebuilt: %+v", r)
	}
	if r := set.For("eu", "x", 21).Flapping; r == nil || *r != (Reentry{After: DefaultFlappingAfter, Times: DefaultFlappingTimes}) {
		t.Fatalf("index 21 flapping: %+v", r)
	}
}

func TestParse_RebuiltAndFlappingTakeDefaultsOrTheirOwn(t *testing.T) {
	set, err := Parse([]byte(`
- index: 1
  rebuilt: true
- index: 2
  flapping: {after: 500ms, times: 5}
- index: 3
  rebuilt: {after: 1m}
- index: 4
  flapping: true
- index: 4
  rebuilt: {times: 2}
- index: 5
  flapping: false
`), "f.yaml")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	cases := []struct {
		index             int
		rebuilt, flapping *Reentry
	}{
		{1, &Reentry{After: DefaultRebuiltAfter, Times: DefaultRebuiltTimes}, nil},
		{2, nil, &Reentry{After: 500 * time.Millisecond, Times: 5}},
		{3, &Reentry{After: time.Minute, Times: DefaultRebuiltTimes}, nil},
		// a later rule's rebuilt replaces an earlier flapping: a node is one or the other
		{4, &Reentry{After: DefaultRebuiltAfter, Times: 2}, nil},
		{5, nil, nil},
	}
	for _, c := range cases {
		f := set.For("eu", "x", c.index)
		if !sameReentry(f.Rebuilt, c.rebuilt) || !sameReentry(f.Flapping, c.flapping) {
			t.Errorf("index %d: rebuilt %+v flapping %+v, want %+v and %+v", c.index, f.Rebuilt, f.Flapping, c.rebuilt, c.flapping)
		}
	}
	if f := set.For("eu", "x", 5); !f.IsZero() {
		t.Errorf("flapping: false left a fault: %+v", f)
	}
	if f := set.For("eu", "x", 2); f.IsZero() || f.Reentry() != f.Flapping {
		t.Errorf("a flapping node is zero or has no re-entry: %+v", f)
	}
}

func sameReentry(a, b *Reentry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func TestParseFlags_RebuiltAndFlapping(t *testing.T) {
	set, err := ParseFlags([]string{"index=0:rebuilt", "index=1:rebuilt=3s", "region=us/glob=n*:flapping=1s/7", "index=2:flapping"})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if r := set.For("eu", "z", 0).Rebuilt; r == nil || *r != (Reentry{After: DefaultRebuiltAfter, Times: DefaultRebuiltTimes}) {
		t.Errorf("rebuilt = %+v", r)
	}
	if r := set.For("eu", "z", 1).Rebuilt; r == nil || *r != (Reentry{After: 3 * time.Second, Times: 1}) {
		t.Errorf("rebuilt=3s = %+v", r)
	}
	if r := set.For("us", "n1", 9).Flapping; r == nil || *r != (Reentry{After: time.Second, Times: 7}) {
		t.Errorf("flapping=1s/7 = %+v", r)
	}
	if r := set.For("eu", "n1", 9).Flapping; r != nil {
		t.Errorf("region ignored: %+v", r)
	}
	if r := set.For("eu", "z", 2).Flapping; r == nil || *r != (Reentry{After: DefaultFlappingAfter, Times: DefaultFlappingTimes}) {
		t.Errorf("flapping = %+v", r)
	}
}

func TestParse_BadRebuiltAndFlappingNameTheProblem(t *testing.T) {
	yamlCases := []struct{ name, yaml, want string }{
		{"word", "- index: 1\n  rebuilt: soon\n", "f.yaml:2: rebuilt: want true, false or a mapping with after and times, got \"soon\""},
		{"field", "- index: 1\n  flapping: {after: 1s, count: 3}\n", "f.yaml:2: unknown field \"count\" in flapping"},
		{"after", "- index: 1\n  flapping: {after: 0s}\n", "f.yaml:2: after: want a positive duration"},
		{"times", "- index: 1\n  rebuilt: {times: 0}\n", "f.yaml:2: times: want a positive integer, got \"0\""},
		{"both", "- index: 1\n  rebuilt: true\n  flapping: true\n", "f.yaml:1: a node is rebuilt or flapping, not both"},
		{"list", "- index: 1\n  rebuilt: [1s]\n", "f.yaml:2: rebuilt: want true, false or a mapping"},
	}
	for _, c := range yamlCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "f.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
	flagCases := map[string]string{
		"index=1:rebuilt=":           "after \"\": want a positive duration",
		"index=1:rebuilt=later":      "after \"later\": want a positive duration",
		"index=1:flapping=-1s":       "after \"-1s\": want a positive duration",
		"index=1:flapping=1s/0":      "times \"0\": want a positive integer",
		"index=1:flapping=1s/many":   "times \"many\": want a positive integer",
		"index=1:rebuilt,flapping":   "a node is rebuilt or flapping, not both",
		"index=1:rebuilt=1s/2/3":     "times \"2/3\": want a positive integer",
		"index=1:flapping.often=yes": "unknown item",
	}
	for flag, want := range flagCases {
		_, err := ParseFlags([]string{flag})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--fault \""+flag+"\"") {
			t.Errorf("flag %q: error = %v, want it to name the flag and contain %q", flag, err, want)
		}
	}
}
