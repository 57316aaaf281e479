// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"time"
)

// Refusal is one batch of results a coordinator refused to an edge, from the edge's log: the
// edge had acted under a lease that was no longer its own, so the results were not acknowledged.
type Refusal struct {
	Edge  string
	Time  time.Time
	Lease string
	Token string
	Nodes []string
	Line  string
}

// refusalMsg is the edge's log message for results its lease source refused.
const refusalMsg = `msg="results refused by the lease source`

// readRefusals parses an edge's text log for refused results.
func readRefusals(edge, path string) []Refusal {
	var out []Refusal
	scanLog(path, refusalMsg, func(line string) {
		r := Refusal{Edge: edge, Line: line, Lease: logField(line, "lease"), Token: logField(line, "token")}
		if t, err := time.Parse(time.RFC3339Nano, logField(line, "time")); err == nil {
			r.Time = t
		}
		r.Nodes = strings.Fields(strings.Trim(logField(line, "nodes"), "[]"))
		out = append(out, r)
	})
	return out
}

// replayMsg is the edge's log message when it starts with calls its previous run never reported.
const replayMsg = `msg="settling calls the previous run sent and never reported"`

// readReplays returns the intents count of each such start in an edge's log, oldest first.
func readReplays(path string) []int {
	var out []int
	scanLog(path, replayMsg, func(line string) {
		n, _ := strconv.Atoi(logField(line, "intents"))
		out = append(out, n)
	})
	return out
}

// scanLog calls found for every line of the log at path that holds msg; a log not there yet
// has none.
func scanLog(path, msg string, found func(line string)) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.Contains(line, msg) {
			found(line)
		}
	}
}

// logField is the value of key=value in a slog text line, unquoted (quotes hold no escapes in
// the fields read here: times, lease ids, tokens, node lists).
func logField(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		if !strings.HasPrefix(line, key+"=") {
			return ""
		}
		i = -1
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if j := strings.Index(v[1:], `"`); j >= 0 {
			return v[1 : j+1]
		}
		return v[1:]
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		return v[:j]
	}
	return v
}
