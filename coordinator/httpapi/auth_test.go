// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"net/http/httptest"
	"testing"
)

// The auth scheme is case-insensitive (RFC 7235 section 2.1, RFC 6750 section 2.1), and one or
// more spaces separate it from the token.
func TestBearer_SchemeInAnyCase(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"Bearer tok", "tok"},
		{"bearer tok", "tok"},
		{"BEARER tok", "tok"},
		{"bEaReR tok", "tok"},
		{"Bearer   tok", "tok"},
		{"Bearer", ""},
		{"Bearer ", ""},
		{"Basic dG9rOg==", ""},
		{"Bearertok", ""},
		{"", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := bearer(r); got != tc.want {
			t.Errorf("bearer(%q) = %q, want %q", tc.header, got, tc.want)
		}
	}
}
