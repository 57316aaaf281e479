// SPDX-License-Identifier: Apache-2.0

package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// FuzzOpen starts an edge on whatever a crash (or a disk) left in its journal file. Open never
// panics; it refuses a file only with an error naming the file and the line; and the intents it
// returns are complete, are those read() finds, and read back the same from the file Open
// rewrote, so a second restart settles exactly what the first would have.
func FuzzOpen(f *testing.F) {
	begin := `{"op":"begin","node":"n1","step":"restart","lease":"L1","token":7,"edge":"e1","region":"eu","at":"2026-01-02T03:04:05.123Z"}`
	end := `{"op":"end","node":"n1","step":"","lease":"L1","token":0,"edge":"","region":"","at":"0001-01-01T00:00:00Z"}`
	for _, s := range []string{
		"",
		begin + "\n",
		begin + "\n" + end + "\n",
		begin + "\n" + end[:17], // killed mid-write
		begin + "\n" + `{"op":"begin","node":"n2","st`,  // killed mid-write, inside a string
		begin + "\n\x00\x00\x00\x00",                    // blocks allocated, never written
		begin + "\n\x00\x00\n",                          // a zeroed block before a newline
		"\n\n  \t\n" + begin + "\r\n",                   // blank lines and a CRLF
		begin + "\nnot json\n" + end + "\n",             // a corrupt middle line
		`{"op":"launch","node":"a","lease":"L"}` + "\n", // an op from no version
		`{"op":"begin","node":"a","lease":"L"}` + "\n",  // no step
		`{"op":"begin","node":"","lease":"L","step":"restart"}` + "\n",
		`{"op":"end"}` + "\n" + `{"op":"begin","node":"a","lease":"L","step":"shutdown","at":"2026-01-02T03:04:05+14:00"}` + "\n",
		`{"op":"begin","node":"a","lease":"L","step":"restart","at":"2026-13-45T03:04:05Z"}` + "\n",
		`{"op":"begin","node":"a","lease":"L","step":"restart","token":-1}` + "\n",
		`{"op":"begin","node":"a","lease":"L","step":"restart","Op":"end","NODE":"b"}` + "\n",
		`{"op":"begin","node":"a\ud800","lease":"L","step":"restart"}` + "\n" + `{"op":"end","node":"a\ufffd","lease":"L"}` + "\n",
		"{\"op\":\"begin\",\"node\":\"\xff\",\"lease\":\"L\",\"step\":\"restart\"}\n",
		`[]` + "\n" + `null` + "\n",
		begin + begin + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "journal")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		want, rerr := read(path)
		j, left, err := Open(path, nil)
		if rerr != nil {
			if err == nil {
				_ = j.Close()
				t.Fatalf("read refused the file (%v), Open did not", rerr)
			}
			if !strings.Contains(err.Error(), "journal "+path+" line ") {
				t.Fatalf("refusal %q names neither the file nor the line", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("read took the file, Open refused it: %v", err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if got := intentSet(t, left); got != intentSet(t, mapValues(want)) {
			t.Fatalf("Open returned %s, the file holds %s", got, intentSet(t, mapValues(want)))
		}
		// read is what the next Open starts with; a second Open would only add fsyncs.
		again, err := read(path)
		if err != nil {
			t.Fatalf("the file Open rewrote is refused: %v", err)
		}
		if a, b := intentSet(t, left), intentSet(t, mapValues(again)); a != b {
			t.Fatalf("open intents %s read back from the rewritten file as %s", a, b)
		}
	})
}

func mapValues(m map[key]Intent) []Intent {
	out := make([]Intent, 0, len(m))
	for _, in := range m {
		out = append(out, in)
	}
	return out
}

// intentSet renders intents in key order, failing t on one that is incomplete or repeated; a
// time is rendered as an instant, since its zone does not survive the file as the same pointer.
func intentSet(t *testing.T, ins []Intent) string {
	t.Helper()
	byKey := map[key]string{}
	var keys []string
	for _, in := range ins {
		if err := in.check(); err != nil {
			t.Fatalf("an open intent is incomplete: %v", err)
		}
		if _, dup := byKey[in.key()]; dup {
			t.Fatalf("intent %q/%q returned twice", in.Node, in.Lease)
		}
		byKey[in.key()] = fmt.Sprintf("%q/%q %q %d %q %q %s", in.Node, in.Lease, in.Step, in.Token, in.Edge, in.Region, in.At.UTC().Format(time.RFC3339Nano))
		keys = append(keys, byKey[in.key()])
	}
	// Sorting the rendered lines sorts by key: each starts with its node and lease.
	slices.Sort(keys)
	return strings.Join(keys, "\n")
}
