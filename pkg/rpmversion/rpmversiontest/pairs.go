// SPDX-License-Identifier: Apache-2.0

// Package rpmversiontest holds the comparisons pkg/rpmversion's benchmarks and tests and
// bench/rpmversion (against github.com/knqyf263/go-rpm-version) run alike.
package rpmversiontest

// Pair is one comparison, A against B, named for the part of the version that decides it.
type Pair struct{ Name, A, B string }

// BenchPairs are the comparisons the upgrade decision makes most.
var BenchPairs = []Pair{
	{"epoch", "1:2.30.0-1.el9", "2.30.1-1.el9"},
	{"release", "2.30.0-1.el9", "2.30.1-1.el9"},
	{"version", "0.29.4", "0.30.0"},
	{"tilde", "1.0~rc1", "1.0"},
	{"caret", "1.0^git1", "1.0"},
}
