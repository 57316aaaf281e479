// SPDX-License-Identifier: Apache-2.0

package rpmversion

import "strings"

// compareSegments orders two version or release strings as rpmvercmp does.
//
// Each string is read as a sequence of tokens ('~', '^', a digit run, a letter run, then the
// end), skipping every other byte; the first differing token decides. Token order is
// '~' < end < '^' < letters < digits.
func compareSegments(a, b string) int {
	if a == b {
		return 0
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for i < len(a) && isSeparator(a[i]) {
			i++
		}
		for j < len(b) && isSeparator(b[j]) {
			j++
		}
		aEnd, bEnd := i == len(a), j == len(b)

		aTilde, bTilde := !aEnd && a[i] == '~', !bEnd && b[j] == '~'
		if aTilde || bTilde {
			if !aTilde {
				return 1
			}
			if !bTilde {
				return -1
			}
			i++
			j++
			continue
		}

		aCaret, bCaret := !aEnd && a[i] == '^', !bEnd && b[j] == '^'
		if aCaret || bCaret {
			switch {
			case aEnd:
				return -1
			case bEnd:
				return 1
			case !aCaret:
				return 1
			case !bCaret:
				return -1
			}
			i++
			j++
			continue
		}

		if aEnd || bEnd {
			break
		}

		si, sj := i, j
		if isDigit(a[i]) {
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			if j == sj {
				return 1 // digits beat letters
			}
			if c := compareNumbers(a[si:i], b[sj:j]); c != 0 {
				return c
			}
			continue
		}
		for i < len(a) && isLetter(a[i]) {
			i++
		}
		for j < len(b) && isLetter(b[j]) {
			j++
		}
		if j == sj {
			return -1 // letters lose to digits
		}
		if c := strings.Compare(a[si:i], b[sj:j]); c != 0 {
			return c
		}
	}
	switch {
	case i == len(a) && j == len(b):
		return 0
	case i == len(a):
		return -1
	default:
		return 1
	}
}

// compareNumbers orders two runs of ASCII digits by value, whatever their length.
func compareNumbers(a, b string) int {
	a, b = trimZeros(a), trimZeros(b)
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isSeparator reports bytes that only end a segment: anything that is not an ASCII letter or
// digit, '~' or '^'.
func isSeparator(c byte) bool {
	return !isDigit(c) && !isLetter(c) && c != '~' && c != '^'
}
