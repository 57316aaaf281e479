// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

func TestDecodeStrict_NamesTheProblem(t *testing.T) {
	cases := []struct {
		name, body string
		code       api.Code
		want       string
	}{
		{"empty", "  ", api.CodeMalformed, "request body is empty"},
		{"syntax", `{"edge":`, api.CodeMalformed, "the body ends before the object does"},
		{"bad token", `{"edge" "e"}`, api.CodeMalformed, "malformed JSON at byte offset"},
		{"unknown field", `{"edge":"e","colour":"red"}`, api.CodeUnknownField, `unknown field "colour"`},
		{"wrong type", `{"edge":"e","max_nodes":"ten"}`, api.CodeBadRequest, "field max_nodes: expected int, got a JSON string"},
		{"array", `[1,2]`, api.CodeMalformed, "expected a JSON object, got a JSON array"},
		{"trailing object", `{"edge":"e"}{"edge":"f"}`, api.CodeMalformed, "trailing data after the JSON object"},
		{"trailing bracket", `{"edge":"e"}]`, api.CodeMalformed, "trailing data after the JSON object"},
		{"trailing garbage", `{"edge":"e"} x`, api.CodeMalformed, "trailing data"},
		{"bare duration", `{"edge":"e","wait":5}`, api.CodeBadRequest, `duration must be a string such as "30s"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var req api.AcquireRequest
			err := decodeStrict([]byte(c.body), &req, false)
			if err == nil {
				t.Fatalf("decodeStrict(%q) accepted it", c.body)
			}
			if err.status != http.StatusBadRequest || err.code != c.code || !strings.Contains(err.msg, c.want) {
				t.Fatalf("decodeStrict(%q) = %d %s %q, want 400 %s containing %q", c.body, err.status, err.code, err.msg, c.code, c.want)
			}
		})
	}
}

func TestDecodeStrict_AcceptsOneObjectWithTrailingWhitespace(t *testing.T) {
	var req api.AcquireRequest
	if err := decodeStrict([]byte("{\"edge\":\"e\",\"max_nodes\":3,\"wait\":\"2s\"}\n\t "), &req, false); err != nil {
		t.Fatalf("refused: %s", err.msg)
	}
	if req.Edge != "e" || req.MaxNodes != 3 || req.Wait.String() != "2s" {
		t.Fatalf("decoded %+v", req)
	}
	var e empty
	if err := decodeStrict(nil, &e, true); err != nil {
		t.Fatalf("empty body refused where allowed: %s", err.msg)
	}
}
