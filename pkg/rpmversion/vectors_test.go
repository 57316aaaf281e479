// SPDX-License-Identifier: Apache-2.0

package rpmversion

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vector is one row of a testdata/*.tsv file, fields verbatim.
type vector struct {
	line     int
	a, b     string
	expected int
	source   string
}

// loadVectors reads name and its *-sources.tsv twin, checks they hold the same rows, and returns
// the rows with their sources. Fields are split on TAB only and never trimmed.
func loadVectors(t testing.TB, name string) []vector {
	t.Helper()
	plain := readTSV(t, name, 3)
	twin := readTSV(t, strings.TrimSuffix(name, ".tsv")+"-sources.tsv", 4)
	if len(plain) != len(twin) {
		t.Fatalf("%s has %d rows, its sources twin %d", name, len(plain), len(twin))
	}
	out := make([]vector, len(plain))
	for k := range plain {
		if plain[k][0] != twin[k][0] || plain[k][1] != twin[k][1] || plain[k][2] != twin[k][2] {
			t.Fatalf("%s line %d differs from its sources twin: %q vs %q", name, k+2, plain[k], twin[k][:3])
		}
		exp, err := strconv.Atoi(plain[k][2])
		if err != nil || exp < -1 || exp > 1 {
			t.Fatalf("%s line %d: expected %q is not -1, 0 or 1", name, k+2, plain[k][2])
		}
		out[k] = vector{line: k + 2, a: plain[k][0], b: plain[k][1], expected: exp, source: twin[k][3]}
	}
	return out
}

func readTSV(t testing.TB, name string, fields int) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	text, ok := strings.CutSuffix(string(data), "\n")
	if !ok {
		t.Fatalf("%s does not end in a newline", name)
	}
	lines := strings.Split(text, "\n")
	header := []string{"a", "b", "expected", "sources"}[:fields]
	if got := strings.Split(lines[0], "\t"); strings.Join(got, "\t") != strings.Join(header, "\t") {
		t.Fatalf("%s header is %q, want %q", name, got, header)
	}
	rows := make([][]string, 0, len(lines)-1)
	for k, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if len(f) != fields {
			t.Fatalf("%s line %d has %d fields, want %d: %q", name, k+2, len(f), fields, line)
		}
		rows = append(rows, f)
	}
	return rows
}

// librpmDisagrees lists the evr-vectors.tsv rows whose published expectation is not librpm's
// answer (testdata/README.md); the test asserts librpm's answer instead.
var librpmDisagrees = []struct {
	a, b      string
	published int
	want      int
	reason    string
}{
	{"^", "", 1, 1, "librpm's EVR parser rejects the empty string, so it has no answer; rpmvercmp(\"^\", \"\") is 1 and an empty NewVersion is version \"\""},
	{"1.0.1-1", "1-0-1-1", 1, 0, "the release starts after the LAST '-': versions 1.0.1 and 1-0-1 compare equal, releases 1 and 1"},
	{"1:0", "1", -1, 1, "anchore ignores an epoch present on one side; librpm reads a missing epoch as 0"},
	{"2:4.19.01-1.el7_5", "4.19.1-1.el7_5", 0, 1, "anchore ignores an epoch present on one side; librpm reads a missing epoch as 0"},
	{"4.19.01-1.el7_5", "2:4.19.1-1.el7_5", 0, -1, "anchore ignores an epoch present on one side; librpm reads a missing epoch as 0"},
	{"4.19.0-1.el7_5", "12:4.19.0-1.el7", 1, -1, "anchore ignores an epoch present on one side; librpm reads a missing epoch as 0"},
	{"3:4.19.0-1.el7_5", "4.21.0-1.el7", -1, 1, "anchore ignores an epoch present on one side; librpm reads a missing epoch as 0"},
}

// seedEpochDisagrees lists the evr-vectors.tsv rows whose answer changes under the seed's epoch
// rule: an epoch that is not an integer is 0 and its text is not part of the version (librpm
// keeps it there; the published answers are librpm's). Each want was worked out by hand.
var seedEpochDisagrees = []struct {
	a, b      string
	published int
	want      int
}{
	{"~3:12.2.3-45", "0:1.2.3-45", -1, 1},
	{"foo:1.0-1", "1.0-1", -1, 0},
	{"foo:1.0-1", "bar:1.0-1", 1, 0},
	{"a:1", "b:1", -1, 0},
	{"c:1~1", "a:2", 1, -1},
	{"a1:1", "b1:1", -1, 0},
	{"a2:1", "a1:2", 1, -1},
	{"b1:1", "a2:1", 1, 0},
	{"a:1", "a1:1", -1, 0},
	{"b:1", "a1:1", 1, 0},
	{"b~1:1", "a1:1", 1, 0},
	{"1.m+e2:1", "4.m+e1:1", -1, 0},
	{"1.module+el9.4.0+23026+aaa2e3cb.2.noarch.rpm-nginx:1", "4.module+el9.5.0+22954+e2d70a1c.1.noarch.rpm-nginx:1", -1, 0},
	{"1.m+el9.4.0+2.na.r-n:1", "4.m+el9.5.0+1.na.r-n:1", -1, 0},
	{"4.0+2.na.r-n:1", "5.0+1.na.r-n:1", -1, 0},
	{"0+2.na.r-n:1", "0+1.na.r-n:1", 1, 0},
	{"0+2-n:1", "0+1-n:1", 1, 0},
	{"+2-n:1", "+1-n:1", 1, 0},
	{"+2-:1", "+1-:1", 1, 0},
	{"+2-:", "+1-:", 1, 0},
}

func TestVectors_RpmvercmpSegments(t *testing.T) {
	for _, name := range []string{"rpmvercmp-vectors.tsv", "vercmp-extra-vectors.tsv"} {
		rows := loadVectors(t, name)
		for _, v := range rows {
			if got := compareSegments(v.a, v.b); got != v.expected {
				t.Errorf("%s:%d rpmvercmp(%q, %q) = %d, want %d (%s)", name, v.line, v.a, v.b, got, v.expected, v.source)
			}
			if got := compareSegments(v.b, v.a); got != -v.expected {
				t.Errorf("%s:%d rpmvercmp(%q, %q) = %d, want %d (reversed row)", name, v.line, v.b, v.a, got, -v.expected)
			}
			// Without ':' or '-' the whole string is the version, so the public API must agree.
			if !strings.ContainsAny(v.a+v.b, ":-") {
				if got := Compare(v.a, v.b); got != v.expected {
					t.Errorf("%s:%d Compare(%q, %q) = %d, want %d (%s)", name, v.line, v.a, v.b, got, v.expected, v.source)
				}
			}
		}
		t.Logf("%s: %d rows", name, len(rows))
	}
}

func TestVectors_EVR(t *testing.T) {
	rows := loadVectors(t, "evr-vectors.tsv")
	overridden, seedRule := 0, 0
	for _, v := range rows {
		want, why := v.expected, v.source
		for _, d := range librpmDisagrees {
			if d.a == v.a && d.b == v.b {
				if v.expected != d.published {
					t.Errorf("evr-vectors.tsv:%d (%q, %q) publishes %d, the override list expects %d", v.line, v.a, v.b, v.expected, d.published)
				}
				want, why = d.want, "librpm's answer: "+d.reason
				overridden++
			}
		}
		for _, d := range seedEpochDisagrees {
			if d.a == v.a && d.b == v.b {
				if v.expected != d.published {
					t.Errorf("evr-vectors.tsv:%d (%q, %q) publishes %d, the seed-epoch list expects %d", v.line, v.a, v.b, v.expected, d.published)
				}
				want, why = d.want, "the seed's epoch rule: a non-integer epoch is 0 and its text is dropped"
				seedRule++
			}
		}
		if got := Compare(v.a, v.b); got != want {
			t.Errorf("evr-vectors.tsv:%d Compare(%q, %q) = %d, want %d (%s)", v.line, v.a, v.b, got, want, why)
		}
		if got := Compare(v.b, v.a); got != -want {
			t.Errorf("evr-vectors.tsv:%d Compare(%q, %q) = %d, want %d (reversed row)", v.line, v.b, v.a, got, -want)
		}
	}
	if overridden != len(librpmDisagrees) {
		t.Errorf("matched %d of the %d rows that disagree with librpm", overridden, len(librpmDisagrees))
	}
	if seedRule != len(seedEpochDisagrees) {
		t.Errorf("matched %d of the %d rows the seed's epoch rule changes", seedRule, len(seedEpochDisagrees))
	}
	t.Logf("evr-vectors.tsv: %d rows, %d with librpm's answer instead of the published one, %d changed by the seed's epoch rule", len(rows), overridden, seedRule)
}

func ExampleCompare() {
	fmt.Println(Compare("1:2.30.0-1.el9", "2.30.1-1.el9"))
	fmt.Println(Compare("1.0~rc1", "1.0"))
	fmt.Println(Compare("1.0^git1", "1.0"))
	// Output:
	// 1
	// -1
	// 1
}
