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
	e, v, r, hasR := split(s)
	return Version{raw: s, epoch: e, version: v, release: r, hasRelease: hasR}
}

// split returns the parts of s, the epoch without leading zeros ("" for 0).
func split(s string) (epoch, version, release string, hasRelease bool) {
	rest := s
	// The epoch is the text before the first ':'. All digits (or none) is that number; any other
	// text is epoch 0, and, as in go-rpm-version (the seed's comparator), it is not part of the
	// version either: "foo:1.0-1" equals "1.0-1". librpm would keep it in the version.
	if i := strings.IndexByte(s, ':'); i >= 0 {
		if allDigits(s[:i]) {
			epoch = trimZeros(s[:i])
		}
		rest = s[i+1:]
	}
	if i := strings.LastIndexByte(rest, '-'); i >= 0 {
		return epoch, rest[:i], rest[i+1:], true
	}
	return epoch, rest, "", false
}

func allDigits(n string) bool {
	for i := 0; i < len(n); i++ {
		if !isDigit(n[i]) {
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
	// Parts go through registers rather than Version values: half the cost on short strings.
	ea, va, ra, hasA := split(a)
	eb, vb, rb, hasB := split(b)
	return compareParts(ea, va, ra, hasA, eb, vb, rb, hasB)
}

// Compare returns -1, 0 or 1 as v sorts before, equal to or after o.
func (v Version) Compare(o Version) int {
	return compareParts(v.epoch, v.version, v.release, v.hasRelease, o.epoch, o.version, o.release, o.hasRelease)
}

func compareParts(ea, va, ra string, hasA bool, eb, vb, rb string, hasB bool) int {
	if ea != eb {
		return compareNumbers(ea, eb)
	}
	if c := compareSegments(va, vb); c != 0 {
		return c
	}
	switch {
	case hasA && hasB:
		return compareSegments(ra, rb)
	case hasA:
		return 1
	case hasB:
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
