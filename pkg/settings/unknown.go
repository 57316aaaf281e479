// SPDX-License-Identifier: Apache-2.0

package settings

import (
	"fmt"
	"sort"
	"strings"
)

// Variables returns the names of environ's variables under the schema's prefix that hold a
// value, sorted, leaving out those under any of skip (another program's namespace).
func (s *Schema) Variables(environ []string, skip ...string) []string {
	var out []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, s.EnvPrefix+"_") || val == "" {
			continue
		}
		foreign := false
		for _, p := range skip {
			foreign = foreign || strings.HasPrefix(name, p)
		}
		if !foreign {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// KeyOfVariable returns the key the variable name sets.
func (s *Schema) KeyOfVariable(name string) (Key, bool) {
	for _, k := range s.Keys {
		if s.EnvName(k.Name) == name {
			return k, true
		}
	}
	return Key{}, false
}

// SuggestKey names the key probably meant by name, as " (did you mean KEY?)", or is "": the
// same name at another level of nesting (jwt for features.jwt), else the closest spelling.
func (s *Schema) SuggestKey(name string) string {
	return suggest(name, s.Names())
}

// SuggestVariable is SuggestKey for a variable, where nesting shows only as a longer name
// (MUSTER_EDGE_JWT for MUSTER_EDGE_FEATURES_JWT).
func (s *Schema) SuggestVariable(name string) string {
	var known []string
	for _, k := range s.Keys {
		known = append(known, s.EnvName(k.Name))
	}
	known = append(known, s.EnvName(FlagConfig))
	rest := strings.TrimPrefix(name, s.EnvPrefix+"_")
	for _, k := range known {
		if k != name && strings.HasSuffix(k, "_"+rest) {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	return suggest(name, known)
}

func suggest(name string, known []string) string {
	leaf := name[strings.LastIndex(name, ".")+1:]
	for _, k := range known {
		if k != name && k[strings.LastIndex(k, ".")+1:] == leaf {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
