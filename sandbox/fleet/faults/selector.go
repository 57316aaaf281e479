// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Selector picks the nodes a rule applies to: exactly one of Identity, Glob or an index range,
// optionally narrowed to one region.
type Selector struct {
	// Region, when set, limits the rule to the fleet of that region.
	Region string
	// Identity matches one node exactly.
	Identity string
	// Glob matches identities with path.Match syntax (*, ?, [a-z]).
	Glob string
	// HasIndex selects the nodes whose index in their fleet is in [From, To].
	HasIndex bool
	From, To int
}

// Matches reports whether the node with this region, identity and fleet index is selected.
func (s Selector) Matches(region, identity string, index int) bool {
	if s.Region != "" && s.Region != region {
		return false
	}
	switch {
	case s.Identity != "":
		return s.Identity == identity
	case s.Glob != "":
		ok, _ := path.Match(s.Glob, identity)
		return ok
	case s.HasIndex:
		return index >= s.From && index <= s.To
	}
	return false
}

// String renders the selector in flag syntax.
func (s Selector) String() string {
	var b strings.Builder
	if s.Region != "" {
		b.WriteString("region=" + s.Region + "/")
	}
	switch {
	case s.Identity != "":
		b.WriteString("identity=" + s.Identity)
	case s.Glob != "":
		b.WriteString("glob=" + s.Glob)
	case s.HasIndex:
		fmt.Fprintf(&b, "index=%d-%d", s.From, s.To)
	}
	return b.String()
}

// parseIndexRange reads "7" or "3-9" (inclusive).
func parseIndexRange(v string) (int, int, error) {
	lo, hi, isRange := strings.Cut(v, "-")
	from, err := strconv.Atoi(strings.TrimSpace(lo))
	if err != nil || from < 0 {
		return 0, 0, fmt.Errorf("index %q: want N or N-M with non-negative integers", v)
	}
	if !isRange {
		return from, from, nil
	}
	to, err := strconv.Atoi(strings.TrimSpace(hi))
	if err != nil || to < 0 {
		return 0, 0, fmt.Errorf("index %q: want N or N-M with non-negative integers", v)
	}
	if to < from {
		return 0, 0, fmt.Errorf("index %q: range end is before its start", v)
	}
	return from, to, nil
}

// checkGlob refuses patterns path.Match cannot evaluate.
func checkGlob(g string) error {
	if g == "" {
		return fmt.Errorf("glob is empty")
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("glob %q: %w", g, err)
	}
	return nil
}
