// SPDX-License-Identifier: Apache-2.0

package rpmversion

import (
	"testing"

	"github.com/seed96588659/muster/pkg/rpmversion/rpmversiontest"
)

// FuzzCompare checks that the order is a total preorder on any bytes: a comparison is -1, 0 or
// 1, reverses when the arguments swap, chains transitively over three inputs, and agrees with
// Equal, LessThan and GreaterThan; and nothing panics.
func FuzzCompare(f *testing.F) {
	for _, p := range rpmversiontest.BenchPairs {
		f.Add(p.A, p.B, p.A+"~")
	}
	for _, name := range []string{"rpmvercmp-vectors.tsv", "vercmp-extra-vectors.tsv", "evr-vectors.tsv"} {
		rows := loadVectors(f, name)
		for k, v := range rows {
			f.Add(v.a, v.b, rows[(k+1)%len(rows)].a)
		}
	}
	f.Add("", "\x00", "\xff")
	f.Add(":::", "---", "0:")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		checkOrder(t, "Compare", Compare, a, b, c)
		checkOrder(t, "rpmvercmp", compareSegments, a, b, c)

		va, vb := NewVersion(a), NewVersion(b)
		got := Compare(a, b)
		if m := va.Compare(vb); m != got {
			t.Fatalf("NewVersion(%q).Compare(NewVersion(%q)) = %d, Compare = %d", a, b, m, got)
		}
		if va.Equal(vb) != (got == 0) || va.LessThan(vb) != (got < 0) || va.GreaterThan(vb) != (got > 0) {
			t.Fatalf("%q vs %q: Compare %d but Equal %v LessThan %v GreaterThan %v",
				a, b, got, va.Equal(vb), va.LessThan(vb), va.GreaterThan(vb))
		}
		if va.String() != a {
			t.Fatalf("NewVersion(%q).String() = %q", a, va.String())
		}
	})
}

// checkOrder fails t unless cmp is antisymmetric, reflexive and transitive on a, b and c.
func checkOrder(t *testing.T, name string, cmp func(x, y string) int, a, b, c string) {
	t.Helper()
	in := [3]string{a, b, c}
	var r [3][3]int
	for x := range 3 {
		for y := range 3 {
			r[x][y] = cmp(in[x], in[y])
			if r[x][y] < -1 || r[x][y] > 1 {
				t.Fatalf("%s(%q, %q) = %d, want -1, 0 or 1", name, in[x], in[y], r[x][y])
			}
		}
	}
	for x := range 3 {
		if r[x][x] != 0 {
			t.Fatalf("%s(%q, %q) = %d, want 0", name, in[x], in[x], r[x][x])
		}
		for y := range 3 {
			if r[x][y] != -r[y][x] {
				t.Fatalf("%s(%q, %q) = %d but %s(%q, %q) = %d", name, in[x], in[y], r[x][y], name, in[y], in[x], r[y][x])
			}
			for z := range 3 {
				xy, yz, xz := r[x][y], r[y][z], r[x][z]
				if xy <= 0 && yz <= 0 && (xz > 0 || (xy+yz < 0 && xz == 0)) {
					t.Fatalf("%s not transitive: %q vs %q = %d, %q vs %q = %d, %q vs %q = %d",
						name, in[x], in[y], xy, in[y], in[z], yz, in[x], in[z], xz)
				}
			}
		}
	}
}
