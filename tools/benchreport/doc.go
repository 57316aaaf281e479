// SPDX-License-Identifier: Apache-2.0

// Package benchreport builds the tables of docs/performance.md (make bench-report): it runs the
// repository's own benchmarks, each `go test -bench` invocation as its own process, reads the
// figures they report from the standard benchmark format, and prints the machine they ran on and
// one markdown row per figure with the command that reproduces it.
//
// What is measured, and at which sizes, is Plan's; this package only runs and formats it, so the
// numbers in the report are exactly those the benchmarks' doc comments define.
package benchreport
