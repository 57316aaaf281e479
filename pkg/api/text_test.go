// SPDX-License-Identifier: Apache-2.0

package api

import (
	"strings"
	"testing"
	"unicode"
)

// evil is text a node on the provisioning broker may send: an OSC 52 clipboard write, a bell,
// clear-screen, a carriage return that repaints the line, and a C1 CSI.
const evil = "1.0\x1b]52;c;b3duZWQ=\x07\x1b[2J\rcleared\u009b31m"

// TestValidate_RefusesControlCharactersInEveryTextField: every free-text field of an edge or
// admin request refuses control characters, naming the field and the character; a node's or
// result's refusal names it alone.
func TestValidate_RefusesControlCharactersInEveryTextField(t *testing.T) {
	report := func(res NodeResult) firstRefusal {
		res.Identity, res.Outcome = "n1", OutcomeFailed
		return resultsOf(&ReportRequest{LeaseID: "l", Token: 3, Edge: "e", Region: "r", Results: []NodeResult{{Identity: "n0", Outcome: OutcomeProvisioned}, res}})
	}
	cases := []struct {
		name string
		v    interface{ Validate() error }
		want string
	}{
		{"register version", nodesOf(&RegisterRequest{Region: "r", Edge: "e", Nodes: []RegisterNode{{Identity: "n0"}, {Identity: "n1", Version: evil}}}), `nodes[1].version: contains control character '\x1b' at byte 3`},
		{"report version", report(NodeResult{Version: evil}), `results[1].version: contains control character '\x1b' at byte 3`},
		{"report error", report(NodeResult{Error: "jwt failed: " + evil}), `results[1].error: contains control character '\x1b' at byte 15`},
		{"report error newline", report(NodeResult{Error: "one\ntwo"}), `results[1].error: contains control character '\n' at byte 3`},
		{"report error C1", report(NodeResult{Error: "x\u009b31m"}), `results[1].error: contains control character '\u009b' at byte 1`},
		{"report error DEL", report(NodeResult{Error: "x\x7f"}), `results[1].error: contains control character '\x7f' at byte 1`},
		{"pause reason", &PauseRequest{Reason: "maintenance\x1b[2J"}, `reason: contains control character '\x1b' at byte 11`},
		{"operator reason", &OperatorRequest{Verb: VerbBan, By: "ops", Nodes: []string{"n1"}, Reason: "bad\rgood"}, `reason: contains control character '\r' at byte 3`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.v.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate() = %v, want it to contain %q", err, c.want)
			}
			for _, r := range err.Error() {
				if unicode.IsControl(r) {
					t.Fatalf("the refusal itself carries %q: %q", r, err.Error())
				}
			}
		})
	}
	// Spaces, tabs aside, and non-ASCII letters are text.
	fine := &ReportRequest{LeaseID: "l", Token: 3, Edge: "e", Region: "r", Results: []NodeResult{{Identity: "n", Outcome: OutcomeFailed, Error: "Gerät: nicht erreichbar (5 s)", Version: "0.30.0-rc1"}}}
	if _, rej := fine.SplitResults(); len(rej) > 0 {
		t.Fatalf("plain text refused: %+v", rej)
	}
}

// TestFitResult_EscapesControlCharacters: an edge escapes the control characters of a result's
// text before it leaves, so the API takes it and a reader still sees what the node sent.
func TestFitResult_EscapesControlCharacters(t *testing.T) {
	res, notes := FitResult(NodeResult{Identity: "n1", Outcome: OutcomeFailed, Error: "jwt failed: " + evil + "\nbad\xffbyte", Version: evil})
	if err := CheckResult(0, res); err != nil {
		t.Fatalf("a fitted result is refused: %v", err)
	}
	if want := `jwt failed: 1.0\x1b]52;c;b3duZWQ=\a\x1b[2J\rcleared\u009b31m\nbad` + "\uFFFD" + `byte`; res.Error != want {
		t.Fatalf("error fitted to %q, want %q", res.Error, want)
	}
	if want := `1.0\x1b]52;c;b3duZWQ=\a\x1b[2J\rcleared\u009b31m`; res.Version != want {
		t.Fatalf("version fitted to %q, want %q", res.Version, want)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "control characters escaped") {
		t.Fatalf("notes %q, want one per escaped field", notes)
	}
	if got := Printable("plain 0.30.0 Gerät"); got != "plain 0.30.0 Gerät" {
		t.Fatalf("plain text changed to %q", got)
	}
}
