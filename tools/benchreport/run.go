// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"
)

// Runner runs one invocation and returns its standard output. An error with output (a benchmark
// that failed after others passed) keeps the figures that were printed.
type Runner interface {
	Run(ctx context.Context, inv Invocation) ([]byte, error)
}

// Outcome is what one invocation gave.
type Outcome struct {
	Results Results
	Err     error
	Took    time.Duration
}

// Execute runs, in the order of the tables, every invocation that a row to be measured needs,
// each once, and writes a line to progress before and after each. Outcomes are by command.
func Execute(ctx context.Context, tables []Table, r Runner, progress io.Writer) map[string]Outcome {
	var todo []Invocation
	seen := map[string]bool{}
	for _, t := range tables {
		for _, row := range t.Rows {
			cmd := row.Run.Command()
			if row.NotRun != "" || seen[cmd] {
				continue
			}
			seen[cmd] = true
			todo = append(todo, row.Run)
		}
	}
	out := make(map[string]Outcome, len(todo))
	for i, inv := range todo {
		cmd := inv.Command()
		fmt.Fprintf(progress, "[%d/%d] %s\n", i+1, len(todo), cmd)
		start := time.Now()
		stdout, err := r.Run(ctx, inv)
		o := Outcome{Err: err, Took: time.Since(start)}
		res, perr := Parse(bytes.NewReader(stdout))
		if perr != nil && o.Err == nil {
			o.Err = perr
		}
		o.Results = res
		status := "ok"
		if o.Err != nil {
			status = o.Err.Error()
		}
		fmt.Fprintf(progress, "[%d/%d] %s in %s\n", i+1, len(todo), status, o.Took.Round(time.Second))
		out[cmd] = o
	}
	return out
}
