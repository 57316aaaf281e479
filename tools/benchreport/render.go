// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Report is everything the printed report holds.
type Report struct {
	Machine Machine
	// ChoriaProvisioner names choria-provisioner's binary and version, "" when it was not given.
	ChoriaProvisioner string
	Commit            string
	Sizes             string
	Start             time.Time
	End               time.Time
	// LoadBefore and LoadAfter are the machine's load averages (ReadLoad) around the runs.
	LoadBefore string
	LoadAfter  string
	Tables     []Table
	Outcomes   map[string]Outcome
}

// Render writes the report as markdown: the machine, then each table.
func Render(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	m := r.Machine
	choriaProvisioner := r.ChoriaProvisioner
	if choriaProvisioner == "" {
		choriaProvisioner = "not given (MUSTER_CHORIA_PROVISIONER_BIN unset)"
	}
	fmt.Fprintf(bw, "### Machine\n\n| | |\n|---|---|\n")
	for _, kv := range [][2]string{
		{"CPU", m.CPU},
		{"cores", strconv.Itoa(m.Cores)},
		{"memory", fmt.Sprintf("%.1f GiB", float64(m.Memory)/(1<<30))},
		{"Go", m.Go},
		{"kernel", m.Kernel},
		{"commit", r.Commit},
		{"choria-provisioner", choriaProvisioner},
		{"sizes", r.Sizes},
		{"run", fmt.Sprintf("%s to %s (%s)", r.Start.UTC().Format("2006-01-02 15:04"), r.End.UTC().Format("15:04 MST"), r.End.Sub(r.Start).Round(time.Second))},
		{"load average (1, 5, 15 min)", fmt.Sprintf("%s before, %s after", r.LoadBefore, r.LoadAfter)},
	} {
		fmt.Fprintf(bw, "| %s | %s |\n", kv[0], cell(kv[1]))
	}
	fmt.Fprintf(bw, "\nEach command runs from the repository's root after `make build`, in the Makefile's environment "+
		"(GONOSUMDB=github.com/choria-io GOFLAGS=-mod=mod GOWORK=off).\n")
	for _, t := range r.Tables {
		writeTable(bw, t, r.Outcomes)
	}
	return bw.Flush()
}

func writeTable(w io.Writer, t Table, outcomes map[string]Outcome) {
	fmt.Fprintf(w, "\n### %s\n\n%s\n\n|", t.Title, t.Note)
	align := "|"
	for _, l := range t.Labels {
		fmt.Fprintf(w, " %s |", l)
		align += "---|"
	}
	for _, c := range t.Columns {
		fmt.Fprintf(w, " %s |", c.Header)
		align += "---:|"
	}
	fmt.Fprintf(w, " command |\n%s---|\n", align)

	figures := map[string]Figures{}
	for _, row := range t.Rows {
		if row.NotRun == "" {
			figures[row.Key] = outcomes[row.Run.Command()].Results[row.Bench]
		}
	}
	for _, row := range t.Rows {
		cells := append([]string(nil), row.Labels...)
		cells = append(cells, figureCells(t.Columns, row, outcomes[row.Run.Command()], figures)...)
		cells = append(cells, "`"+row.Run.Command()+"`")
		for i := range cells {
			cells[i] = cell(cells[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// figureCells are a row's cells under the table's columns; a row without figures says why in
// its first.
func figureCells(cols []Column, row Row, o Outcome, figures map[string]Figures) []string {
	cells := make([]string, len(cols))
	f := figures[row.Key]
	switch {
	case row.NotRun != "":
		cells[0] = row.NotRun
		return cells
	case f == nil && o.Err != nil:
		cells[0] = "failed: " + o.Err.Error()
		return cells
	case f == nil:
		cells[0] = "no result"
		return cells
	}
	for i, c := range cols {
		v, ok := f[c.Unit]
		if !ok {
			continue
		}
		if !c.Ratio {
			scale := c.Scale
			if scale == 0 {
				scale = 1
			}
			cells[i] = formatNumber(v*scale, c.Digits)
			continue
		}
		if row.Baseline == "" {
			continue
		}
		base, ok := figures[row.Baseline][c.Unit]
		if !ok || base == 0 || v == 0 {
			cells[i] = "–"
			continue
		}
		cells[i] = formatRatio(v / base)
	}
	if o.Err != nil {
		cells[0] += " (run failed: " + o.Err.Error() + ")"
	}
	return cells
}

// formatNumber rounds v to digits decimals and groups the thousands of its integer part.
func formatNumber(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac {
		frac = "." + frac
	}
	return sign + groupDigits(whole) + frac
}

// groupDigits puts a comma between each three digits of an integer's decimal form.
func groupDigits(s string) string {
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// formatRatio prints r as a multiple ("5.9x", "0.85x") or, below a half, as a fraction ("1/48").
func formatRatio(r float64) string {
	switch {
	case r >= 1:
		return strconv.FormatFloat(r, 'f', 1, 64) + "x"
	case r >= 0.5:
		return strconv.FormatFloat(r, 'f', 2, 64) + "x"
	case 1/r >= 10:
		return "1/" + strconv.FormatFloat(math.Round(1/r), 'f', 0, 64)
	default:
		return "1/" + strconv.FormatFloat(1/r, 'f', 1, 64)
	}
}

// cell makes s safe inside a markdown table cell: a pipe would end the cell, even inside code.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
