// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzJSONScan holds the scanner of jsonscan.go to encoding/json on any bytes, outside the reply
// layers that FuzzV1ReplyLayers covers: a value the scanner takes whole is valid JSON, and valid
// JSON within maxScanDepth is taken; the fields objectFields picks out are the values
// encoding/json finds under those exact names, with no other key it would match to them; and
// each string, int or base64 value it reads is what encoding/json reads, while a value it is not
// sure of is one encoding/json refuses or reads differently (a replaced invalid byte or surrogate).
func FuzzJSONScan(f *testing.F) {
	for _, in := range layerInputs() {
		f.Add([]byte(in), "protocol", "data")
	}
	for _, c := range capturedReplies(f) {
		f.Add(c.secure, "message", "hash")
		f.Add(c.body, "statuscode", "data")
	}
	for _, s := range []string{
		`"plain"`, `"esc\"aped\u00e9\ud83d\ude00"`, "\"\xc3\x28\"", `"\udfff\ud800"`, `"YWJj\r\nZA=="`,
		`-0`, `0.5`, `1E+2`, `-9223372036854775808`, `-9223372036854775809`, ` true `, `nul`, `[1,[2,[3]]]`,
		`{"Data":1,"data":2}`, `{"data":1,"data":2}`, `{"dAtA":1}`, `{"\u0064ata":1}`, `{"dat\u0061":1,"data":2}`,
	} {
		f.Add([]byte(s), "data", "statusmsg")
	}
	f.Fuzz(func(t *testing.T, data []byte, name1, name2 string) {
		start := skipSpace(data, 0)
		end := scanValue(data, start, 1)
		whole := end >= 0 && skipSpace(data, end) == len(data)
		valid := json.Valid(data)
		if whole && !valid {
			t.Fatalf("scanValue took invalid JSON %q", data)
		}
		if valid && !whole && nesting(data) < maxScanDepth {
			t.Fatalf("scanValue refused valid JSON %q nested %d deep", data, nesting(data))
		}
		if whole {
			sameScalars(t, data[start:end])
		}

		names := []string{name1, name2}
		if name1 == name2 {
			names = names[:1]
		}
		vals := make([][]byte, len(names))
		if !objectFields(data, vals, names...) {
			return
		}
		if !valid {
			t.Fatalf("objectFields took invalid JSON %q", data)
		}
		keys := topLevelKeys(t, data)
		for k, name := range names {
			var found []byte
			count := 0
			for _, kv := range keys {
				if kv.key == name {
					found, count = kv.val, count+1
				} else if strings.EqualFold(kv.key, name) {
					t.Fatalf("objectFields took %q though key %q matches %q for encoding/json", data, kv.key, name)
				}
			}
			switch {
			case count > 1:
				t.Fatalf("objectFields took %q though %q repeats (encoding/json keeps the last)", data, name)
			case !bytes.Equal(vals[k], found) || (vals[k] == nil) != (count == 0):
				t.Fatalf("objectFields read %q as %q, encoding/json finds %q", name, vals[k], found)
			}
			if vals[k] != nil {
				sameScalars(t, vals[k])
			}
		}
	})
}

// sameScalars fails t unless stringValue, intValue and base64Value read raw, one whole JSON
// value, as encoding/json reads it into a string, an int and a []byte, or are not sure where
// encoding/json refuses it or changes it.
func sameScalars(t *testing.T, raw []byte) {
	t.Helper()
	var s string
	serr := json.Unmarshal(raw, &s)
	got, ok := stringValue(raw)
	switch {
	case ok && (serr != nil || string(got) != s):
		t.Fatalf("stringValue(%q) = %q, encoding/json reads %q (%v)", raw, got, s, serr)
	case !ok && serr == nil && raw[0] == '"' && !strings.ContainsRune(s, utf8.RuneError):
		t.Fatalf("stringValue not sure of %q, which encoding/json reads as %q unchanged", raw, s)
	}

	var n int
	nerr := json.Unmarshal(raw, &n)
	if v, ok := intValue(raw); ok && (nerr != nil || v != n) {
		t.Fatalf("intValue(%q) = %d, encoding/json reads %d (%v)", raw, v, n, nerr)
	} else if !ok && nerr == nil && raw[0] != 'n' {
		t.Fatalf("intValue not sure of %q, which encoding/json reads as %d", raw, n)
	}

	var b []byte
	berr := json.Unmarshal(raw, &b)
	if v, ok := base64Value(raw); ok && (berr != nil || !bytes.Equal(v, b)) {
		t.Fatalf("base64Value(%q) = %q, encoding/json reads %q (%v)", raw, v, b, berr)
	} else if !ok && berr == nil && raw[0] == '"' && !strings.ContainsRune(s, utf8.RuneError) {
		t.Fatalf("base64Value not sure of %q, which encoding/json reads as %q", raw, b)
	}
}

// keyValue is one member of an object as encoding/json reads it: the decoded key, the raw value.
type keyValue struct {
	key string
	val json.RawMessage
}

// topLevelKeys lists data's members in order, repeats included (a map would keep only the last).
func topLevelKeys(t *testing.T, data []byte) []keyValue {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("objectFields took %q, which does not open an object for encoding/json (%v %v)", data, tok, err)
	}
	var out []keyValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		var kv keyValue
		kv.key = tok.(string)
		if err := dec.Decode(&kv.val); err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		out = append(out, kv)
	}
	return out
}

// nesting is the deepest nesting of arrays and objects in data, valid JSON.
func nesting(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
