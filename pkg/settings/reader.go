// SPDX-License-Identifier: Apache-2.0

package settings

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// Reader turns viper's values (YAML types from the file, text from the environment and flags)
// into Go values, recording one FieldError per key that does not read.
type Reader struct {
	Errors
	s *Schema
	v *viper.Viper
}

// SetDefault makes key read as value when nothing else sets it, for a default known only at
// run time (a file that exists on this machine).
func (r *Reader) SetDefault(key string, value any) { r.v.SetDefault(key, value) }

// get returns the value of key; an unset or blank value is the key's default.
func (r *Reader) get(name string) any {
	val := r.v.Get(name)
	if s, ok := val.(string); val == nil || ok && strings.TrimSpace(s) == "" {
		if k, ok := r.s.Lookup(name); ok && k.Default != nil {
			return k.Default
		}
		return nil
	}
	return val
}

// String reads text, trimmed.
func (r *Reader) String(name string) string {
	switch x := r.get(name).(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case map[string]any:
		r.Add(name, "expected a string, got a map (%s)", describeMap(x))
	case int, int64, uint64, float64, bool:
		if r.s.ScalarText {
			return fmt.Sprint(x)
		}
		r.Add(name, "expected a string, got %T %v (quote the value)", x, x)
	default:
		r.Add(name, "expected a string, got %T %v", x, x)
	}
	return ""
}

// Bool reads true or false, or text that strconv.ParseBool takes.
func (r *Reader) Bool(name string) bool {
	switch x := r.get(name).(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			r.Add(name, "%q is not true or false", x)
		}
		return b
	default:
		r.Add(name, "expected true or false, got %T %v", x, x)
		return false
	}
}

// Int reads a whole number that fits an int on every platform (32 bits).
func (r *Reader) Int(name string) int {
	return int(r.Int64(name, math.MinInt32, math.MaxInt32))
}

// Int64 reads a whole number within lo..hi.
func (r *Reader) Int64(name string, lo, hi int64) int64 {
	var n int64
	switch x := r.get(name).(type) {
	case nil:
		return 0
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		if x > math.MaxInt64 {
			r.Add(name, "%d is out of range", x)
			return 0
		}
		n = int64(x)
	case float64:
		if x != math.Trunc(x) {
			r.Add(name, "%v is not a whole number", x)
			return 0
		}
		// YAML reads a whole number beyond int64 (or .inf) as a float, whose conversion to an
		// integer is not defined: checked here, so the error shows the value as written.
		if x < float64(lo) || x >= float64(hi)+1 {
			r.Add(name, "%v is out of range", x)
			return 0
		}
		n = int64(x)
	case string:
		var err error
		if n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 64); err != nil {
			r.Add(name, "%q is not a whole number", x)
			return 0
		}
	default:
		r.Add(name, "expected a whole number, got %T %v", x, x)
		return 0
	}
	if n < lo || n > hi {
		r.Add(name, "%d is out of range", n)
		return 0
	}
	return n
}

// Duration reads text the schema's duration parser takes. A bare number is refused: 30 could
// mean seconds or nanoseconds.
func (r *Reader) Duration(name string) time.Duration {
	parse := r.s.Durations
	if parse == nil {
		parse = time.ParseDuration
	}
	switch x := r.get(name).(type) {
	case nil:
		return 0
	case time.Duration:
		return x
	case string:
		d, err := parse(strings.TrimSpace(x))
		if err != nil {
			r.Add(name, "%q is not a duration (%v; valid examples: %s)", x, err, r.s.DurationExamples)
			return 0
		}
		return d
	case int, int64, uint64, float64:
		r.Add(name, "%v has no unit: expected a duration such as %s", x, r.s.DurationExamples)
		return 0
	default:
		r.Add(name, "expected a duration such as %s, got %T %v", r.s.DurationExamples, x, x)
		return 0
	}
}

// List reads a YAML sequence or a flag's values, or from the environment a JSON array or items
// between the schema's separators.
func (r *Reader) List(name string) []string {
	switch x := r.get(name).(type) {
	case nil:
		return nil
	case []string:
		return trimAll(x)
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				r.Add(name, "item %d: expected a string, got %T %v", i, e, e)
				return nil
			}
			out = append(out, s)
		}
		return trimAll(out)
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "[") {
			var out []string
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				r.Add(name, "%q is not a JSON array of strings: %v", x, err)
				return nil
			}
			return trimAll(out)
		}
		seps := r.s.ListSeparators
		if seps == "" {
			seps = ","
		}
		return trimAll(strings.FieldsFunc(s, func(c rune) bool { return strings.ContainsRune(seps, c) }))
	default:
		r.Add(name, "expected a list, got %T %v", x, x)
		return nil
	}
}

// Section refuses a scalar where the file must hold a map of keys, such as `features: true`,
// which viper would otherwise read as all of the section's keys unset.
func (r *Reader) Section(name string) {
	switch x := r.v.Get(name).(type) {
	case nil, map[string]any:
	default:
		r.Add(name, "expected a map of %s, got %T %v", strings.Join(r.s.section(name), ", "), x, x)
	}
}

func trimAll(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func describeMap(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) > 3 {
		ks = ks[:3]
	}
	return fmt.Sprintf("keys %s", strings.Join(ks, ", "))
}
