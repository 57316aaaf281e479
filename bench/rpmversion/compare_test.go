// SPDX-License-Identifier: Apache-2.0

package rpmversionbench

import (
	"testing"

	gorpm "github.com/knqyf263/go-rpm-version"
	"github.com/seed96588659/muster/pkg/rpmversion"
	"github.com/seed96588659/muster/pkg/rpmversion/rpmversiontest"
)

// BenchmarkCompare compares two strings, parsing included, as the upgrade decision does.
func BenchmarkCompare(b *testing.B) {
	for _, p := range rpmversiontest.BenchPairs {
		b.Run(p.Name+"/muster", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rpmversion.Compare(p.A, p.B)
			}
		})
		b.Run(p.Name+"/go-rpm-version", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				gorpm.NewVersion(p.A).Compare(gorpm.NewVersion(p.B))
			}
		})
	}
}

// BenchmarkParsedCompare compares values parsed once, outside the loop.
func BenchmarkParsedCompare(b *testing.B) {
	for _, p := range rpmversiontest.BenchPairs {
		ma, mb := rpmversion.NewVersion(p.A), rpmversion.NewVersion(p.B)
		ga, gb := gorpm.NewVersion(p.A), gorpm.NewVersion(p.B)
		b.Run(p.Name+"/muster", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ma.Compare(mb)
			}
		})
		b.Run(p.Name+"/go-rpm-version", func(b *testing.B) {
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
	for _, p := range rpmversiontest.BenchPairs {
		ours := rpmversion.Compare(p.A, p.B)
		theirs := gorpm.NewVersion(p.A).Compare(gorpm.NewVersion(p.B))
		if ours != theirs {
			t.Errorf("%s: %q vs %q: muster %d, go-rpm-version %d", p.Name, p.A, p.B, ours, theirs)
		}
	}
}
