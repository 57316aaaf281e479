// SPDX-License-Identifier: Apache-2.0

package rpmversion

import "testing"

// benchPairs are the comparisons the upgrade decision makes most; bench/rpmversion runs the
// same pairs through github.com/knqyf263/go-rpm-version.
var benchPairs = []struct{ name, a, b string }{
	{"epoch", "1:2.30.0-1.el9", "2.30.1-1.el9"},
	{"release", "2.30.0-1.el9", "2.30.1-1.el9"},
	{"version", "0.29.4", "0.30.0"},
	{"tilde", "1.0~rc1", "1.0"},
	{"caret", "1.0^git1", "1.0"},
}

func BenchmarkCompare(b *testing.B) {
	for _, p := range benchPairs {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Compare(p.a, p.b)
			}
		})
	}
}

func BenchmarkVersionCompare(b *testing.B) {
	for _, p := range benchPairs {
		va, vb := NewVersion(p.a), NewVersion(p.b)
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				va.Compare(vb)
			}
		})
	}
}
