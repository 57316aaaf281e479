// SPDX-License-Identifier: Apache-2.0

package settings

import (
	"strings"
	"time"
)

// Kind says how a key's value reads and which flag carries it.
type Kind int

// Kinds of keys.
const (
	String Kind = iota
	Int
	Bool
	Duration
	List
)

// FlagConfig is the flag (and, as PREFIX_CONFIG, the variable) naming the YAML file: it says
// where the keys come from, and is not one of them.
const FlagConfig = "config"

// Key is one configuration key.
type Key struct {
	// Name is the key as written in the file, '.' between nested maps (features.jwt).
	Name string
	Kind Kind
	// Default is what an unset or blank key reads as, in the form a file holds it; nil is the
	// zero value.
	Default any
	// Flag is the key's command-line flag, "" for none.
	Flag  string
	Usage string
	// Ignored says why a key is accepted but has no effect; such keys are warned about.
	Ignored string
	// Secret keys never get a flag: a command line is readable by every user through ps.
	Secret bool
}

// Schema is one program's configuration: its keys and how they read.
type Schema struct {
	// EnvPrefix starts every variable: a key's is the prefix, '_', and the key upper-cased with
	// '.' as '_'.
	EnvPrefix string
	Keys      []Key
	// Durations parses a duration written as text; nil is time.ParseDuration.
	Durations func(string) (time.Duration, error)
	// DurationExamples are shown when a duration does not read.
	DurationExamples string
	// ListSeparators split a list given as one string (the environment); "" is ",".
	ListSeparators string
	// ScalarText reads a number or a boolean where text belongs as written. Without it such a
	// value is refused: YAML may have changed it (a hex key such as 12e45 reads as a float).
	ScalarText bool
}

// EnvName is the environment variable of key.
func (s *Schema) EnvName(key string) string { return EnvName(s.EnvPrefix, key) }

// EnvName is the variable of key under prefix: the prefix, '_', and the key upper-cased with '.'
// as '_' (MUSTER_EDGE_FEATURES_JWT).
func EnvName(prefix, key string) string {
	return prefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// FlagName is a flag named after key: '.' and '_' become '-'.
func FlagName(key string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(key)
}

// Names lists every key's name, in the schema's order.
func (s *Schema) Names() []string {
	out := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		out[i] = k.Name
	}
	return out
}

// Lookup returns the key named name.
func (s *Schema) Lookup(name string) (Key, bool) {
	for _, k := range s.Keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// IsSection reports whether name is a map of keys in the file, such as "features".
func (s *Schema) IsSection(name string) bool {
	for _, k := range s.Keys {
		if strings.HasPrefix(k.Name, name+".") {
			return true
		}
	}
	return false
}

// section lists the keys under name, without the section's prefix.
func (s *Schema) section(name string) []string {
	var out []string
	for _, k := range s.Keys {
		if sub, ok := strings.CutPrefix(k.Name, name+"."); ok {
			out = append(out, sub)
		}
	}
	return out
}
