// SPDX-License-Identifier: Apache-2.0

package benchreport

// Table is one section of the report: rows of one kind of figure.
type Table struct {
	Title string
	// Note says in a sentence what the rows measure.
	Note    string
	Labels  []string
	Columns []Column
	Rows    []Row
}

// Column is one figure of every row: a reported unit, scaled and rounded, or that unit's ratio to
// the row's baseline.
type Column struct {
	Header string
	Unit   string
	// Scale multiplies the reported value (ns/op to ms: 1e-6); zero leaves it as it is.
	Scale  float64
	Digits int
	// Ratio prints the row's value over its baseline's ("5.9x", "1/48") instead of the value.
	Ratio bool
}

// Row is one line of a table: what it measured and the benchmark result its figures come from.
type Row struct {
	// Key names the row for other rows' Baseline; unique in a plan.
	Key    string
	Labels []string
	// Bench is the result's name without its GOMAXPROCS suffix.
	Bench string
	Run   Invocation
	// NotRun says why the row is not measured; its invocation is then never run.
	NotRun string
	// Baseline is the Key of the row the Ratio columns compare with, or "".
	Baseline string
}
