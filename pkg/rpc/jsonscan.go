// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A reply's layers are read by a scanner that validates a whole JSON document and picks out the
// values of a few keys in one pass, instead of encoding/json's validating pass, decoding pass
// and reflection for each of four nested layers. The scanner only ever answers "read exactly as
// encoding/json would" or "not sure"; on "not sure" the caller decodes the layer with
// encoding/json, so every error, and every unusual but valid input, is still encoding/json's.
// Not sure is: invalid JSON; a key with an escape or a non-ASCII byte, or one that matches a
// wanted name only when letter case is ignored (encoding/json matches names case-insensitively);
// a wanted name twice (encoding/json keeps the last); a wanted value of an unexpected type or
// null; a string with invalid UTF-8 or a lone surrogate escape (encoding/json replaces them);
// nesting deeper than maxScanDepth.

// maxScanDepth bounds the scanner's recursion; encoding/json reads deeper documents (up to
// 10000), so a deeper one is left to it.
const maxScanDepth = 128

// String flags from scanString.
const (
	strEscaped  = 1 << iota // contains a backslash escape
	strNonASCII             // contains a byte >= 0x80
)

// objectFields scans b, which must be one JSON object with optional surrounding whitespace, and
// sets vals[k] to the raw bytes of the value of key names[k] (nil when absent). ok is false when
// the scanner is not sure (see above); vals is then meaningless.
func objectFields(b []byte, vals [][]byte, names ...string) bool {
	for k := range vals {
		vals[k] = nil
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end, flags := scanString(b, i)
		if end < 0 || flags != 0 {
			return false
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := scanValue(b, i, 1)
		if vend < 0 {
			return false
		}
		for k, name := range names {
			if string(key) == name {
				if vals[k] != nil {
					return false
				}
				vals[k] = b[i:vend]
				break
			}
			if asciiEqualFold(key, name) {
				return false
			}
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

func asciiEqualFold(a []byte, s string) bool {
	if len(a) != len(s) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanValue returns the index just past the JSON value that starts at b[i], or -1 when there is
// no valid value there (or it nests deeper than maxScanDepth).
func scanValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		end, _ := scanString(b, i)
		return end
	case '{', '[':
		if depth >= maxScanDepth {
			return -1
		}
		return scanComposite(b, i, depth+1)
	case 't':
		return scanLiteral(b, i, "true")
	case 'f':
		return scanLiteral(b, i, "false")
	case 'n':
		return scanLiteral(b, i, "null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return scanNumber(b, i)
		}
		return -1
	}
}

// scanComposite scans the object or array that opens at b[i].
func scanComposite(b []byte, i, depth int) int {
	closer := byte(']')
	object := b[i] == '{'
	if object {
		closer = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1
	}
	for {
		if object {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			end, _ := scanString(b, i)
			if end < 0 {
				return -1
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
		end := scanValue(b, i, depth)
		if end < 0 {
			return -1
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closer:
			return i + 1
		default:
			return -1
		}
	}
}

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// scanString scans the string that opens at b[i] and returns the index past its closing quote,
// or -1 when it is not a valid JSON string, and whether it holds escapes or non-ASCII bytes.
// Runs of ordinary bytes are skipped eight at a time: a reply's strings are kilobytes of
// base64 and of JSON quoted once or twice.
func scanString(b []byte, i int) (int, int) {
	flags := 0
	i++
	for {
		for len(b)-i >= 8 && !hasSpecialByte(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			return -1, 0
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, flags
		case c == '\\':
			flags |= strEscaped
			i++
			if i >= len(b) {
				return -1, 0
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return -1, 0
				}
				i += 4
			default:
				return -1, 0
			}
		case c < 0x20:
			return -1, 0
		case c >= utf8.RuneSelf:
			flags |= strNonASCII
		}
		i++
	}
}

// hasSpecialByte is true when one of w's bytes is a quote, a backslash, a control character or
// not ASCII. For bytes below 0x80, (x - n) &^ x has a byte's high bit set where some byte of x
// is below n (the classic SWAR test, exact while no byte has its high bit set); a byte with its
// high bit set is special anyway. It may be true for a word whose only special byte is not
// the first: the caller then looks at bytes one at a time, which is always correct.
func hasSpecialByte(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := w ^ (ones * '"')
	backslash := w ^ (ones * '\\')
	special := w | (w-ones*0x20)&^w | (quote-ones)&^quote | (backslash-ones)&^backslash
	return special&highs != 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// stringValue is the content of raw, a JSON string from objectFields; nil raw (absent) is "".
// The content aliases raw when raw has no escapes. ok is false for another type, null, invalid
// UTF-8 or a lone surrogate escape.
func stringValue(raw []byte) ([]byte, bool) {
	if raw == nil {
		return nil, true
	}
	if raw[0] != '"' {
		return nil, false
	}
	// objectFields validated raw; only its content's encoding is left to check.
	s := raw[1 : len(raw)-1]
	if !utf8.Valid(s) {
		return nil, false
	}
	if bytes.IndexByte(s, '\\') < 0 {
		return s, true
	}
	return unescape(s)
}

// unescape decodes the escapes of s, a valid JSON string's content in valid UTF-8.
func unescape(s []byte) ([]byte, bool) {
	out := make([]byte, 0, len(s))
	start := 0
	for {
		j := bytes.IndexByte(s[start:], '\\')
		if j < 0 {
			break
		}
		i := start + j
		out = append(out, s[start:i]...)
		i++
		switch c := s[i]; c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(s[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) {
				if len(s)-i < 7 || s[i+1] != '\\' || s[i+2] != 'u' {
					return nil, false
				}
				r = utf16.DecodeRune(r, hex4(s[i+3:i+7]))
				if r == utf8.RuneError {
					return nil, false
				}
				i += 6
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, c)
		}
		start = i + 1
	}
	return append(out, s[start:]...), true
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// intValue is raw, a JSON number from objectFields, as an int; nil raw (absent) is 0. ok is
// false for another type, null, a fraction or exponent, or a value out of range.
func intValue(raw []byte) (int, bool) {
	if raw == nil {
		return 0, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || int64(int(n)) != n {
		return 0, false
	}
	return int(n), true
}

// base64Value is raw, a JSON string from objectFields, decoded from standard base64 as
// encoding/json decodes a []byte field; nil raw (absent) is nil.
func base64Value(raw []byte) ([]byte, bool) {
	if raw == nil {
		return nil, true
	}
	s, ok := stringValue(raw)
	if !ok {
		return nil, false
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(out, s)
	if err != nil {
		return nil, false
	}
	return out[:n], true
}
