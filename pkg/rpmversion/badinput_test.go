// SPDX-License-Identifier: Apache-2.0

package rpmversion

import (
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/rpmversion/rpmversiontest"
)

// TestCompare_BadInputAlwaysAnswers feeds the inputs a broken inventory could send and checks
// the answer librpm's rules give, in both directions.
func TestCompare_BadInputAlwaysAnswers(t *testing.T) {
	mib := 1 << 20
	nines := strings.Repeat("9", mib)
	cases := []struct {
		name string
		a, b string
		want int
	}{
		{"empty equals empty", "", "", 0},
		{"empty below a version", "", "0", -1},
		{"empty above a tilde", "", "~", 1},
		{"empty equals separators only", "", ".+_", 0},
		{"1 MiB number above a shorter one", nines, "1" + strings.Repeat("0", mib-1) + "-", 1},
		{"1 MiB number below one more digit", nines, nines + "0", -1},
		{"1 MiB number equals itself with leading zeros", nines, "000" + nines, 0},
		{"1 MiB epoch compares as a number", nines + ":0", strings.Repeat("9", mib-1) + "8:99", 1},
		{"1 MiB of tildes below empty", strings.Repeat("~", mib), "", -1},
		{"1 MiB of high bytes equals empty", strings.Repeat("\xff", mib), "", 0},
		{"1 MiB of dashes has a release", strings.Repeat("-", mib), "", 1},
		{"1 MiB of colons is version only", strings.Repeat(":", mib), "", 0},
		{"NUL only separates", "1\x002", "1.2", 0},
		{"trailing NUL ignored", "1.0\x00", "1.0", 0},
		{"NUL then tilde still a tilde", "1\x00~", "1", -1},
		{"NUL in epoch voids it, and its text", "1\x00:2", "2", 0},
		{"invalid UTF-8 separates", "1\xfe2", "1.2", 0},
		{"truncated UTF-8 ignored", "a\xc3", "a", 0},
		{"UTF-8 letters are not letters", "1.\xc3\xa9", "1", 0},
		{":::", ":::", "", 0},
		{"::: below 0", ":::", "0", -1},
		{"::: epoch is empty (0), version \"::\"", ":::", "0:", 0},
		{"---", "---", "", 1},
		{"--- has an empty release", "---", "--", 0},
		{"--- below a real release", "---", "-1", -1},
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("%s: Compare(%.40q, %.40q) = %d, want %d", c.name, c.a, c.b, got, c.want)
		}
		if got := Compare(c.b, c.a); got != -c.want {
			t.Errorf("%s (reversed): Compare(%.40q, %.40q) = %d, want %d", c.name, c.b, c.a, got, -c.want)
		}
	}
}

func TestNewVersion_Parts(t *testing.T) {
	cases := []struct {
		in                      string
		epoch, version, release string
	}{
		{"1:2.30.0-1.el9", "1", "2.30.0", "1.el9"},
		{"2.30.0-1.el9", "0", "2.30.0", "1.el9"},
		{"007:1", "7", "1", ""},
		{"18446744073709551616:1", "18446744073709551616", "1", ""},
		{":1-2", "0", "1", "2"},
		{"x:1-2", "0", "1", "2"},
		{"1-2:3", "0", "3", ""},
		{"x:1:2-3", "0", "1:2", "3"},
		{"1:2:3-4-5", "1", "2:3-4", "5"},
		{"", "0", "", ""},
		{"---", "0", "--", ""},
		{":::", "0", "::", ""},
	}
	for _, c := range cases {
		v := NewVersion(c.in)
		if v.Epoch() != c.epoch || v.Version() != c.version || v.Release() != c.release || v.String() != c.in {
			t.Errorf("NewVersion(%q) = epoch %q version %q release %q string %q; want %q %q %q %q",
				c.in, v.Epoch(), v.Version(), v.Release(), v.String(), c.epoch, c.version, c.release, c.in)
		}
	}
}

func TestVersion_Predicates(t *testing.T) {
	older, newer := NewVersion("1:2.30.0-1.el9"), NewVersion("1:2.30.0-1.el9_2")
	same := NewVersion("01:2.030.0-1.el9")
	if !older.LessThan(newer) || older.GreaterThan(newer) || older.Equal(newer) {
		t.Errorf("%s vs %s: LessThan %v GreaterThan %v Equal %v", older, newer, older.LessThan(newer), older.GreaterThan(newer), older.Equal(newer))
	}
	if !newer.GreaterThan(older) || newer.LessThan(older) {
		t.Errorf("%s vs %s: GreaterThan %v LessThan %v", newer, older, newer.GreaterThan(older), newer.LessThan(older))
	}
	if !older.Equal(same) || older.Compare(same) != 0 {
		t.Errorf("%s vs %s: Equal %v Compare %d", older, same, older.Equal(same), older.Compare(same))
	}
	var zero Version
	if !zero.Equal(NewVersion("")) || zero.Epoch() != "0" || zero.String() != "" {
		t.Errorf("zero Version: Equal(\"\") %v Epoch %q String %q", zero.Equal(NewVersion("")), zero.Epoch(), zero.String())
	}
}

// TestCompare_AllocatesNothing is not a speed target: allocations are a count, not a timing.
func TestCompare_AllocatesNothing(t *testing.T) {
	for _, p := range rpmversiontest.BenchPairs {
		if n := testing.AllocsPerRun(100, func() { Compare(p.A, p.B) }); n != 0 {
			t.Errorf("Compare(%q, %q) allocates %.1f times", p.A, p.B, n)
		}
	}
}
