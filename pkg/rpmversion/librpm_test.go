// SPDX-License-Identifier: Apache-2.0

//go:build librpm

package rpmversion

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/rpmversion/internal/librpm"
)

var (
	librpmPairs = flag.Int("librpm.pairs", 200_000, "random pairs the librpm differential compares")
	librpmSeed  = flag.Uint64("librpm.seed", 0, "seed of the librpm differential (0: from the clock)")
)

// TestLibrpm_Vectors checks the testdata against the real librpm too, so a wrong row (or a wrong
// override in librpmDisagrees) cannot hide behind an implementation that copies it.
func TestLibrpm_Vectors(t *testing.T) {
	for _, name := range []string{"rpmvercmp-vectors.tsv", "vercmp-extra-vectors.tsv"} {
		for _, v := range loadVectors(t, name) {
			if got := mustVercmp(t, v.a, v.b); got != v.expected {
				t.Errorf("%s:%d librpm rpmvercmp(%q, %q) = %d, the row says %d", name, v.line, v.a, v.b, got, v.expected)
			}
		}
	}
	disagree := 0
	for _, v := range loadVectors(t, "evr-vectors.tsv") {
		lib, err := librpm.VerCmp(v.a, v.b)
		if err != nil {
			if v.a != "" && v.b != "" {
				t.Fatalf("evr-vectors.tsv:%d: %v", v.line, err)
			}
			disagree++ // librpm has no answer for an empty string
			continue
		}
		if lib != v.expected {
			disagree++
		}
		if lib, err = librpm.VerCmp(librpmForm(v.a), librpmForm(v.b)); err != nil {
			t.Fatalf("evr-vectors.tsv:%d: %v", v.line, err)
		}
		if got := Compare(v.a, v.b); got != lib {
			t.Errorf("evr-vectors.tsv:%d Compare(%q, %q) = %d, librpm %d", v.line, v.a, v.b, got, lib)
		}
	}
	if disagree != len(librpmDisagrees) {
		t.Errorf("librpm disagrees with %d evr-vectors.tsv rows, the override list names %d", disagree, len(librpmDisagrees))
	}
}

// TestLibrpm_Differential compares random and adversarial pairs with librpm: rpmvercmp on the
// raw strings, then rpmverParse's split and rpmverCmp's order of the full EVRs.
func TestLibrpm_Differential(t *testing.T) {
	seed := *librpmSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -librpm.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))

	var results [3]int
	evrPairs := 0
	for n := 0; n < *librpmPairs; n++ {
		a, b := randomPair(rng)
		want := mustVercmp(t, a, b)
		if got := compareSegments(a, b); got != want {
			t.Fatalf("pair %d: rpmvercmp(%q, %q) = %d, ours %d", n, a, b, want, got)
		}
		results[want+1]++
		if a == "" || b == "" {
			continue // rpmverParse rejects the empty string
		}
		evrPairs++
		checkSplit(t, a)
		checkSplit(t, b)
		lib, err := librpm.VerCmp(librpmForm(a), librpmForm(b))
		if err != nil {
			t.Fatal(err)
		}
		if got := Compare(a, b); got != lib {
			t.Fatalf("pair %d: rpmverCmp(%q, %q) = %d, Compare(%q, %q) %d", n, librpmForm(a), librpmForm(b), lib, a, b, got)
		}
	}
	t.Logf("%d pairs against rpmvercmp (%d less, %d equal, %d greater), %d of them also against rpmverParse and rpmverCmp",
		*librpmPairs, results[0], results[1], results[2], evrPairs)
	if results[1] < *librpmPairs/50 {
		t.Errorf("only %d of %d pairs compared equal: the generator no longer reaches deep comparisons", results[1], *librpmPairs)
	}
}

// librpmForm rewrites s so that librpm reads it as the seed's rule does: a non-integer epoch
// becomes "0", its text dropped. "0:" keeps the rest whole, even a rest with its own ':', because
// librpm's epoch ends at the first ':' too. Strings with an integer epoch or none are unchanged.
func librpmForm(s string) string {
	i := strings.IndexByte(s, ':')
	if i < 0 || allDigits(s[:i]) {
		return s
	}
	return "0:" + s[i+1:]
}

// checkSplit fails t unless NewVersion splits s as librpm's rpmverParse splits librpmForm(s).
func checkSplit(t *testing.T, s string) {
	t.Helper()
	evr, err := librpm.Parse(librpmForm(s))
	if err != nil {
		t.Fatal(err)
	}
	v := NewVersion(s)
	epoch := "0"
	if evr.Epoch != nil {
		epoch = strings.TrimLeft(*evr.Epoch, "0")
		if epoch == "" {
			epoch = "0"
		}
	}
	if v.Epoch() != epoch || v.Version() != *evr.Version || v.hasRelease != (evr.Release != nil) ||
		(evr.Release != nil && v.Release() != *evr.Release) {
		t.Fatalf("NewVersion(%q) = epoch %q version %q release %q (present %v); rpmverParse: %s",
			s, v.Epoch(), v.Version(), v.Release(), v.hasRelease, describe(evr))
	}
}

func describe(e librpm.EVR) string {
	f := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return "\"" + *p + "\""
	}
	return "epoch " + f(e.Epoch) + " version " + f(e.Version) + " release " + f(e.Release)
}

func mustVercmp(t *testing.T, a, b string) int {
	t.Helper()
	c, err := librpm.Vercmp(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// randomPair returns two strings that are either unrelated, one a small edit of the other, or
// both built like real EVRs, over an alphabet biased towards the bytes rpmvercmp treats specially.
func randomPair(rng *rand.Rand) (string, string) {
	switch rng.IntN(4) {
	case 0:
		return randomString(rng, rng.IntN(12)), randomString(rng, rng.IntN(12))
	case 1:
		a := randomString(rng, rng.IntN(16))
		return a, mutate(rng, a)
	case 2:
		a := randomEVR(rng)
		return a, mutate(rng, a)
	default:
		return randomEVR(rng), randomEVR(rng)
	}
}

// token returns a piece of a random string, biased towards the bytes rpmvercmp treats
// specially. It never returns NUL: C strings end there, so librpm cannot see it.
func token(rng *rand.Rand) string {
	alphabet := [...]string{
		"0", "0", "0", "1", "1", "2", "9", "00", "10", "99999999999999999999",
		"a", "b", "z", "A", "Z", "rc", "el", "git",
		"~", "~", "^", "^", ".", ".", "-", "-", ":", ":", "+", "_", " ",
		"\x01", "\x7f", "\x80", "\xc3\xa9", "\xff", "\t",
	}
	return alphabet[rng.IntN(len(alphabet))]
}

func randomString(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteString(token(rng))
	}
	return sb.String()
}

func randomEVR(rng *rand.Rand) string {
	var sb strings.Builder
	switch rng.IntN(5) {
	case 0:
		sb.WriteString(randomString(rng, rng.IntN(3)) + ":")
	case 1, 2:
		sb.WriteString([]string{"", "0", "1", "2", "01", "10", "18446744073709551616"}[rng.IntN(7)] + ":")
	}
	for k := range 1 + rng.IntN(4) {
		if k > 0 {
			sb.WriteString([]string{".", ".", ".", "~", "^", "+", "_"}[rng.IntN(7)])
		}
		sb.WriteString([]string{"0", "1", "2", "10", "30", "01", "rc1", "git1", "a", "el9", "fc40"}[rng.IntN(11)])
	}
	if rng.IntN(4) > 0 {
		sb.WriteString("-" + []string{"", "1", "2", "1.el9", "1.el9_2", "0.1.rc1", "3-4", "1~"}[rng.IntN(8)])
	}
	return sb.String()
}

// mutate returns s with one to three small edits: a byte inserted, removed or replaced, or a
// token duplicated, so comparisons run deep into equal prefixes.
func mutate(rng *rand.Rand, s string) string {
	for range 1 + rng.IntN(3) {
		k := 0
		if len(s) > 0 {
			k = rng.IntN(len(s) + 1)
		}
		tok := token(rng)
		switch rng.IntN(4) {
		case 0:
			s = s[:k] + tok + s[k:]
		case 1:
			if k < len(s) {
				s = s[:k] + s[k+1:]
			}
		case 2:
			if k < len(s) {
				s = s[:k] + tok + s[k+1:]
			}
		default:
			s = s[:k] + s[:k] // repeat the prefix, keeping the tail out
		}
	}
	return s
}
