// SPDX-License-Identifier: Apache-2.0

package rpmversion

import "strings"

// Version is a parsed epoch:version-release string; the zero value is the empty string.
type Version struct {
	raw        string
	epoch      string // ASCII digits without leading zeros; "" is epoch 0
	version    string
	release    string
	hasRelease bool // a missing release sorts below any present one, even ""
}

// NewVersion parses s; it never fails, because every string has an RPM ordering.
func NewVersion(s string) Version {
	v := Version{raw: s}
	rest := s
	if i := strings.IndexByte(s, ':'); i >= 0 && allDigits(s[:i]) {
		v.epoch = trimZeros(s[:i])
		rest = s[i+1:]
	}
	if i := strings.LastIndexByte(rest, '-'); i >= 0 {
		v.version, v.release, v.hasRelease = rest[:i], rest[i+1:], true
	} else {
		v.version = rest
	}
	return v
}

// allDigits reports whether e can be an epoch. Otherwise librpm reads no epoch (0) and keeps
// the text, ':' included, as part of the version; so does NewVersion.
func allDigits(e string) bool {
	for k := 0; k < len(e); k++ {
		if !isDigit(e[k]) {
			return false
		}
	}
	return true
}

func trimZeros(n string) string {
	for len(n) > 0 && n[0] == '0' {
		n = n[1:]
	}
	return n
}

// Compare parses a and b and returns -1, 0 or 1 as a sorts before, equal to or after b.
func Compare(a, b string) int {
	va, vb := NewVersion(a), NewVersion(b)
	return va.Compare(vb)
}

// Compare returns -1, 0 or 1 as v sorts before, equal to or after o.
func (v Version) Compare(o Version) int {
	if c := compareNumbers(v.epoch, o.epoch); c != 0 {
		return c
	}
	if c := compareSegments(v.version, o.version); c != 0 {
		return c
	}
	switch {
	case v.hasRelease && o.hasRelease:
		return compareSegments(v.release, o.release)
	case v.hasRelease:
		return 1
	case o.hasRelease:
		return -1
	}
	return 0
}

// Equal reports whether v and o sort the same; "1.0" equals "1..0" and "0:1.0".
func (v Version) Equal(o Version) bool { return v.Compare(o) == 0 }

// LessThan reports whether v sorts before o.
func (v Version) LessThan(o Version) bool { return v.Compare(o) < 0 }

// GreaterThan reports whether v sorts after o.
func (v Version) GreaterThan(o Version) bool { return v.Compare(o) > 0 }

// String returns the text v was parsed from, unchanged.
func (v Version) String() string { return v.raw }

// Epoch returns the epoch in decimal without leading zeros ("0" when absent or not a number);
// it is a string because an epoch may have any number of digits.
func (v Version) Epoch() string {
	if v.epoch == "" {
		return "0"
	}
	return v.epoch
}

// Version returns the version part: after the epoch's ':' and before the last '-'.
func (v Version) Version() string { return v.version }

// Release returns the text after the last '-', or "" when there is none.
func (v Version) Release() string { return v.release }
