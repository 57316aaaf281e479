// SPDX-License-Identifier: Apache-2.0

package rpmversion

import "testing"

// TestCompare_NonIntegerEpochIsZeroAndDropped checks the seed's rule as go-rpm-version applies
// it: an epoch that is not an integer is 0, and the version starts after its ':'.
func TestCompare_NonIntegerEpochIsZeroAndDropped(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"foo:1.0-1", "1.0-1", 0},
		{"x:2", "0:2", 0},
		{"x:2", "2", 0},
		{"foo:1.0-1", "bar:1.0-1", 0},
		{"a:1", "a1:1", 0},
		{"x:1.0", "1:0.1", -1},
		{"x:2.0", "1.0", 1},
		{"1-2:3", "3", 0},
		{"1\x00:2", "2", 0},
		{"+1:2", "2", 0},
		{"x:1:2", "0:1:2", 0},
		{"x:", "", 0},
		{"~3:12.2.3-45", "0:1.2.3-45", 1},
	}
	for _, c := range cases {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Compare(c.b, c.a); got != -c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
		if got := NewVersion(c.a).Compare(NewVersion(c.b)); got != c.want {
			t.Errorf("NewVersion(%q).Compare(NewVersion(%q)) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
