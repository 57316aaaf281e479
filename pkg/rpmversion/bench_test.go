// SPDX-License-Identifier: Apache-2.0

package rpmversion

import (
	"testing"

	"github.com/seed96588659/muster/pkg/rpmversion/rpmversiontest"
)

func BenchmarkCompare(b *testing.B) {
	for _, p := range rpmversiontest.BenchPairs {
		b.Run(p.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Compare(p.A, p.B)
			}
		})
	}
}

func BenchmarkVersionCompare(b *testing.B) {
	for _, p := range rpmversiontest.BenchPairs {
		va, vb := NewVersion(p.A), NewVersion(p.B)
		b.Run(p.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				va.Compare(vb)
			}
		})
	}
}
