// SPDX-License-Identifier: Apache-2.0

// Package rpmversion compares RPM epoch:version-release strings the way librpm does.
//
// The upgrade decision needs the answer rpm itself would give. Credits: the behaviour followed
// is rpm's rpmvercmp (rpm >= 4.15, with '~' and '^') for version and release segments and
// librpm's rpmverParse and rpmverCmp for the epoch:version-release split and order; the API
// follows github.com/knqyf263/go-rpm-version, the comparator the seed vendored. No code is copied
// from either: this is written from the rules below and checked against librpm itself (tests
// with the librpm build tag).
//
// Segments: runs of ASCII digits or ASCII letters. '~' sorts before everything, even the end of
// the string; '^' sorts after the end of the string but before any further segment; a numeric
// segment beats an alphabetic one; numbers ignore leading zeros and have no size limit; letters
// compare bytewise ('Z' < 'a'). Every other byte, including NUL and bytes >= 0x80, only separates.
//
// Parsing: the epoch is the text before the first ':'. If it is all ASCII digits (or empty) it is
// that number, of any size; otherwise the epoch is 0, silently, as the seed says, and the version
// starts after that ':' as in go-rpm-version, the seed's comparator ("foo:1.0-1" equals "1.0-1",
// "x:2" equals "0:2"). Here alone this differs from librpm, which keeps such text in the version.
// A sign is not a digit: "+1:2" has epoch 0. The release is the text after the last '-' of the
// rest; a missing release sorts below any present one, even an empty one, as rpmverCmp does.
//
// Comparing two strings allocates nothing.
package rpmversion
