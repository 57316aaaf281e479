// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"sort"
	"strings"
)

// warnings collects one line per key that is accepted but ignored, or not known at all.
type warnings struct {
	list   []string
	warned map[string]bool
}

func (w *warnings) add(name, format string, args ...any) {
	if w.warned == nil {
		w.warned = map[string]bool{}
	}
	if w.warned[name] {
		return
	}
	w.warned[name] = true
	w.list = append(w.list, name+": "+fmt.Sprintf(format, args...))
}

// fileKeys warns about the file's ignored and unknown keys. A scalar where a section belongs
// (`features: true`) is left to parse, which refuses it.
func (w *warnings) fileKeys(fileKeys []string) {
	sort.Strings(fileKeys)
	for _, name := range fileKeys {
		if k, ok := lookupKey(name); ok {
			if k.ignored != "" {
				w.add(name, "ignored: %s", k.ignored)
			}
			continue
		}
		if isSection(name) {
			continue
		}
		w.add(name, "unknown key, ignored%s", suggest(name, Keys()))
	}
}

// environment warns about MUSTER_EDGE_ variables that name no key, and about ignored keys set there.
func (w *warnings) environment(environ []string) {
	known := map[string]key{}
	var names []string
	for _, k := range allKeys() {
		known[EnvName(k.name)] = k
		names = append(names, EnvName(k.name))
	}
	names = append(names, EnvName(FlagConfig))
	var seen []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix+"_") || val == "" {
			continue
		}
		seen = append(seen, name)
	}
	sort.Strings(seen)
	for _, name := range seen {
		if name == EnvName(FlagConfig) {
			continue
		}
		k, ok := known[name]
		switch {
		case !ok:
			w.add(name, "unknown environment variable, ignored%s", suggestEnv(name, names))
		case k.ignored != "":
			w.add(k.name, "ignored: %s", k.ignored)
		}
	}
}

// suggest names the key that was probably meant: the same name at another level of nesting
// (jwt for features.jwt), else the closest spelling.
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

// suggestEnv is suggest for variable names, where nesting shows only as a longer name
// (MUSTER_EDGE_JWT for MUSTER_EDGE_FEATURES_JWT).
func suggestEnv(name string, known []string) string {
	rest := strings.TrimPrefix(name, EnvPrefix+"_")
	for _, k := range known {
		if k != name && strings.HasSuffix(k, "_"+rest) {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	return suggest(name, known)
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
