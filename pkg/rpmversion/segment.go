// SPDX-License-Identifier: Apache-2.0

package rpmversion

// compareSegments orders two version or release strings as rpmvercmp does.
//
// Each string is read as a sequence of tokens ('~', '^', a digit run, a letter run, then the
// end), skipping every other byte; the first differing token decides. Token order is
// '~' < end < '^' < letters < digits. Both strings are walked once, side by side.
func compareSegments(a, b string) int {
	// Equal bytes make equal tokens, so start at the token boundary before the first difference.
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	if k == len(a) && k == len(b) {
		return 0
	}
	switch {
	case k > 0 && isDigit(a[k-1]):
		for k > 0 && isDigit(a[k-1]) {
			k--
		}
	case k > 0 && isLetter(a[k-1]):
		for k > 0 && isLetter(a[k-1]) {
			k--
		}
	}
	i, j := k, k
	for {
		for i < len(a) && isSeparator(a[i]) {
			i++
		}
		for j < len(b) && isSeparator(b[j]) {
			j++
		}
		if i < len(a) && j < len(b) {
			ca, cb := a[i], b[j]
			var c int
			switch {
			case isDigit(ca) && isDigit(cb):
				if i, j, c = compareNumberRuns(a, b, i, j); c != 0 {
					return c
				}
				continue
			case isLetter(ca) && isLetter(cb):
				if i, j, c = compareLetterRuns(a, b, i, j); c != 0 {
					return c
				}
				continue
			}
		}
		var ca, cb byte // 0 stands for the end: NUL itself is a separator, skipped above
		if i < len(a) {
			ca = a[i]
		}
		if j < len(b) {
			cb = b[j]
		}
		switch {
		case ca == '~' || cb == '~':
			if ca != '~' {
				return 1
			}
			if cb != '~' {
				return -1
			}
		case ca == '^' || cb == '^':
			switch {
			case ca == 0:
				return -1
			case cb == 0:
				return 1
			case ca != '^':
				return 1
			case cb != '^':
				return -1
			}
		case ca == 0 && cb == 0:
			return 0
		case ca == 0:
			return -1
		case cb == 0:
			return 1
		case isDigit(ca):
			return 1 // digits beat letters
		default:
			return -1 // letters lose to digits
		}
		i++
		j++
	}
}

// compareNumberRuns compares the digit runs starting at a[i] and b[j] by value (any length,
// leading zeros ignored) and returns the indexes just past them.
func compareNumberRuns(a, b string, i, j int) (int, int, int) {
	for i < len(a) && a[i] == '0' {
		i++
	}
	for j < len(b) && b[j] == '0' {
		j++
	}
	first := 0 // the first differing digit decides between runs of equal length
	for i < len(a) && j < len(b) && isDigit(a[i]) && isDigit(b[j]) {
		if first == 0 && a[i] != b[j] {
			first = 1
			if a[i] < b[j] {
				first = -1
			}
		}
		i++
		j++
	}
	aMore, bMore := i < len(a) && isDigit(a[i]), j < len(b) && isDigit(b[j])
	switch {
	case aMore:
		return i, j, 1 // more digits: a larger number
	case bMore:
		return i, j, -1
	}
	return i, j, first
}

// compareLetterRuns compares the letter runs starting at a[i] and b[j] bytewise, a prefix
// sorting first, and returns the indexes just past them.
func compareLetterRuns(a, b string, i, j int) (int, int, int) {
	for i < len(a) && j < len(b) && isLetter(a[i]) && isLetter(b[j]) {
		if a[i] != b[j] {
			if a[i] < b[j] {
				return i, j, -1
			}
			return i, j, 1
		}
		i++
		j++
	}
	aMore, bMore := i < len(a) && isLetter(a[i]), j < len(b) && isLetter(b[j])
	switch {
	case aMore:
		return i, j, 1
	case bMore:
		return i, j, -1
	}
	return i, j, 0
}

// compareNumbers orders two strings of ASCII digits by value, whatever their length.
func compareNumbers(a, b string) int {
	_, _, c := compareNumberRuns(a, b, 0, 0)
	return c
}

func isDigit(c byte) bool { return c-'0' < 10 }

func isLetter(c byte) bool { return (c|0x20)-'a' < 26 }

// isSeparator reports bytes that only end a segment: anything that is not an ASCII letter or
// digit, '~' or '^'.
func isSeparator(c byte) bool {
	return !isDigit(c) && !isLetter(c) && c != '~' && c != '^'
}
