// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"fmt"
	"io"
	"regexp"

	"golang.org/x/perf/benchfmt"
)

// Figures are one benchmark's reported values by unit as printed ("nodes/min", "ns/op"): the
// mean over its result lines when -count ran it more than once.
type Figures map[string]float64

// Results are the figures of one go test run by benchmark name without its GOMAXPROCS suffix
// ("BenchmarkEdge/exec/1000").
type Results map[string]Figures

// procsSuffix is the "-2" testing appends to a benchmark's name when GOMAXPROCS is above one.
var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// Parse reads the standard benchmark format. Lines that are not results (logs, PASS, ok) are
// skipped, and so are malformed ones: a benchmark's own output may break into its result line,
// and that one figure is then missing rather than the whole run.
func Parse(r io.Reader) (Results, error) {
	type sum struct {
		total map[string]float64
		n     map[string]int
	}
	sums := map[string]*sum{}
	br := benchfmt.NewReader(r, "go test")
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		// benchfmt's names leave out the "Benchmark" every result line starts with.
		name := "Benchmark" + procsSuffix.ReplaceAllString(res.Name.String(), "")
		s := sums[name]
		if s == nil {
			s = &sum{total: map[string]float64{}, n: map[string]int{}}
			sums[name] = s
		}
		for _, v := range res.Values {
			// benchfmt tidies some units (ns/op to sec/op, rss-MB to rss-B) and then keeps the
			// benchmark's own in OrigUnit, which is what the tables name.
			unit, value := v.Unit, v.Value
			if v.OrigUnit != "" {
				unit, value = v.OrigUnit, v.OrigValue
			}
			s.total[unit] += value
			s.n[unit]++
		}
	}
	if err := br.Err(); err != nil {
		return nil, fmt.Errorf("read benchmark output: %w", err)
	}
	out := make(Results, len(sums))
	for name, s := range sums {
		f := make(Figures, len(s.total))
		for unit, total := range s.total {
			f[unit] = total / float64(s.n[unit])
		}
		out[name] = f
	}
	return out, nil
}
