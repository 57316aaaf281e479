// SPDX-License-Identifier: Apache-2.0

package rpmversionbench

import (
	"testing"

	gorpm "github.com/knqyf263/go-rpm-version"
	"github.com/seed96588659/muster/pkg/rpmversion"
)

// pairs are the same as pkg/rpmversion's benchPairs, in the same order.
var pairs = []struct{ name, a, b string }{
	{"epoch", "1:2.30.0-1.el9", "2.30.1-1.el9"},
	{"release", "2.30.0-1.el9", "2.30.1-1.el9"},
	{"version", "0.29.4", "0.30.0"},
	{"tilde", "1.0~rc1", "1.0"},
	{"caret", "1.0^git1", "1.0"},
}

// BenchmarkCompare compares two strings, parsing included, as the upgrade decision does.
func BenchmarkCompare(b *testing.B) {
	for _, p := range pairs {
		b.Run(p.name+"/muster", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rpmversion.Compare(p.a, p.b)
			}
		})
		b.Run(p.name+"/go-rpm-version", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				gorpm.NewVersion(p.a).Compare(gorpm.NewVersion(p.b))
			}
		})
	}
}

// BenchmarkParsedCompare compares values parsed once, outside the loop.
func BenchmarkParsedCompare(b *testing.B) {
	for _, p := range pairs {
		ma, mb := rpmversion.NewVersion(p.a), rpmversion.NewVersion(p.b)
		ga, gb := gorpm.NewVersion(p.a), gorpm.NewVersion(p.b)
		b.Run(p.name+"/muster", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ma.Compare(mb)
			}
		})
		b.Run(p.name+"/go-rpm-version", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ga.Compare(gb)
			}
		})
	}
}

// TestSameAnswers keeps the benchmark honest: both sides must agree on these pairs, or one of
// them is measuring a different comparison.
func TestSameAnswers(t *testing.T) {
	for _, p := range pairs {
		ours := rpmversion.Compare(p.a, p.b)
		theirs := gorpm.NewVersion(p.a).Compare(gorpm.NewVersion(p.b))
		if ours != theirs {
			t.Errorf("%s: %q vs %q: muster %d, go-rpm-version %d", p.name, p.a, p.b, ours, theirs)
		}
	}
}
