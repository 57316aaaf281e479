// SPDX-License-Identifier: Apache-2.0

package api

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s with each control character written as its Go escape (ESC as \x1b, a
// newline as \n) and each invalid byte as U+FFFD: text a node chose stays readable and can no
// longer drive the terminal it is printed on.
func Printable(s string) string {
	if i, _ := firstControl(s); i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s { // an invalid byte ranges as utf8.RuneError
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// firstControl is the byte offset and rune of s's first control character, or -1.
func firstControl(s string) (int, rune) {
	for i, r := range s {
		if unicode.IsControl(r) {
			return i, r
		}
	}
	return -1, 0
}

// validateText checks a free-text field: bounded, valid UTF-8, and no control characters, which
// would reach an operator's terminal as escape sequences wherever the text is printed.
func validateText(field, v string, max int) error {
	if len(v) > max {
		return fmt.Errorf("%s: %d bytes, longer than %d", field, len(v), max)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s: %q is not valid UTF-8", field, v)
	}
	if i, r := firstControl(v); i >= 0 {
		return fmt.Errorf("%s: contains control character %q at byte %d; escape it (api.Printable) before sending", field, r, i)
	}
	return nil
}
