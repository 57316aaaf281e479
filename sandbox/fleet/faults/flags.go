// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FlagHelp documents the --fault syntax for command help.
const FlagHelp = `SELECTOR:ITEM[,ITEM...] where SELECTOR is [region=R/]identity=ID | glob=PATTERN | index=N[-M]
and ITEM is one of: silent | duplicate | fail=ACTION/K[/MESSAGE] | slow=DURATION[@ACTION+ACTION...] |
drop=K | disconnect=ACTION[/DURATION] | version=V | upgradable=true|false | fact.NAME=VALUE |
rebuilt[=AFTER[/TIMES]] (default 40s/1) | flapping[=AFTER[/TIMES]] (default 2s/3)`

// ParseFlags parses each --fault value (see FlagHelp); errors quote the offending flag.
func ParseFlags(values []string) (*Set, error) {
	var rules []Rule
	for _, v := range values {
		r, err := ParseFlag(v)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return NewSet(rules...), nil
}

// ParseFlag parses one --fault value.
func ParseFlag(value string) (Rule, error) {
	src := fmt.Sprintf("--fault %q", value)
	r := Rule{Source: src}
	fail := func(format string, args ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("%s: %s", src, fmt.Sprintf(format, args...))
	}
	sel, items, ok := strings.Cut(value, ":")
	if !ok || strings.TrimSpace(items) == "" {
		return fail("want SELECTOR:ITEM[,ITEM...] (%s)", FlagHelp)
	}
	if err := parseFlagSelector(sel, &r.Select); err != nil {
		return fail("%v", err)
	}
	for item := range strings.SplitSeq(items, ",") {
		item = strings.TrimSpace(item)
		if err := parseFlagItem(item, &r.Fault); err != nil {
			return fail("item %q: %v", item, err)
		}
	}
	if r.Fault.Rebuilt != nil && r.Fault.Flapping != nil {
		return fail("a node is rebuilt or flapping, not both: give one of them")
	}
	return r, nil
}

func parseFlagSelector(sel string, s *Selector) error {
	sel = strings.TrimSpace(sel)
	if region, rest, ok := strings.Cut(sel, "/"); ok && strings.HasPrefix(region, "region=") {
		s.Region = strings.TrimPrefix(region, "region=")
		if s.Region == "" {
			return fmt.Errorf("selector %q: region is empty", sel)
		}
		sel = rest
	}
	key, val, ok := strings.Cut(sel, "=")
	if !ok || val == "" {
		return fmt.Errorf("selector %q: want identity=ID, glob=PATTERN or index=N[-M]", sel)
	}
	switch key {
	case "identity":
		s.Identity = val
	case "glob":
		if err := checkGlob(val); err != nil {
			return fmt.Errorf("selector: %w", err)
		}
		s.Glob = val
	case "index":
		from, to, err := parseIndexRange(val)
		if err != nil {
			return fmt.Errorf("selector: %w", err)
		}
		s.HasIndex, s.From, s.To = true, from, to
	default:
		return fmt.Errorf("selector %q: unknown kind %q (want identity, glob or index)", sel, key)
	}
	return nil
}

func parseFlagItem(item string, f *Fault) error {
	key, val, hasVal := strings.Cut(item, "=")
	switch {
	case item == "":
		return fmt.Errorf("empty item")
	case key == "silent" && !hasVal:
		f.Silent = true
		return nil
	case key == "duplicate" && !hasVal:
		f.Duplicate = true
		return nil
	case key == "rebuilt" || key == "flapping":
		return parseReentryItem(key, val, hasVal, f)
	case strings.HasPrefix(key, "fact.") && len(key) > len("fact."):
		if !hasVal {
			return fmt.Errorf("want fact.NAME=VALUE")
		}
		if f.Facts == nil {
			f.Facts = map[string]any{}
		}
		f.Facts[strings.TrimPrefix(key, "fact.")] = val
		return nil
	}
	parse := valuedItem(key)
	if parse == nil {
		return fmt.Errorf("unknown item (want %s)", FlagHelp)
	}
	if !hasVal || val == "" {
		return fmt.Errorf("%s needs a value", key)
	}
	return parse(val, f)
}

// valuedItem is the parser of the items written KEY=VALUE, nil for an unknown key.
func valuedItem(key string) func(val string, f *Fault) error {
	switch key {
	case "fail":
		return parseFail
	case "slow":
		return parseSlow
	case "drop":
		return parseDrop
	case "disconnect":
		return parseDisconnect
	case "version":
		return func(val string, f *Fault) error { f.Version = val; return nil }
	case "upgradable":
		return parseUpgradable
	}
	return nil
}

// parseFail reads fail=ACTION/K[/MESSAGE].
func parseFail(val string, f *Fault) error {
	parts := strings.SplitN(val, "/", 3)
	if len(parts) < 2 {
		return fmt.Errorf("want fail=ACTION/K[/MESSAGE]")
	}
	action, err := NormalizeAction(parts[0])
	if err != nil {
		return err
	}
	k, err := strconv.Atoi(parts[1])
	if err != nil || k < 1 {
		return fmt.Errorf("times %q: want a positive integer", parts[1])
	}
	fl := Fail{Action: action, Times: k}
	if len(parts) == 3 {
		fl.Message = parts[2]
	}
	f.Fails = append(f.Fails, fl)
	return nil
}

// parseSlow reads slow=DURATION[@ACTION+ACTION...].
func parseSlow(val string, f *Fault) error {
	dur, actions, _ := strings.Cut(val, "@")
	d, err := time.ParseDuration(dur)
	if err != nil || d <= 0 {
		return fmt.Errorf("duration %q: want a positive duration such as 2s", dur)
	}
	f.Delay = d
	f.DelayActions = nil
	if actions == "" {
		return nil
	}
	for a := range strings.SplitSeq(actions, "+") {
		na, err := NormalizeAction(a)
		if err != nil {
			return err
		}
		f.DelayActions = append(f.DelayActions, na)
	}
	return nil
}

// parseDrop reads drop=K.
func parseDrop(val string, f *Fault) error {
	k, err := strconv.Atoi(val)
	if err != nil || k < 1 {
		return fmt.Errorf("%q: want a positive integer", val)
	}
	f.DropFirst = k
	return nil
}

// parseDisconnect reads disconnect=ACTION[/DURATION].
func parseDisconnect(val string, f *Fault) error {
	action, dur, hasDur := strings.Cut(val, "/")
	a, err := NormalizeAction(action)
	if err != nil {
		return err
	}
	d := &Disconnect{After: a}
	if hasDur {
		if d.For, err = time.ParseDuration(dur); err != nil || d.For <= 0 {
			return fmt.Errorf("duration %q: want a positive duration such as 30s", dur)
		}
	}
	f.Disconnect = d
	return nil
}

// parseUpgradable reads upgradable=BOOL.
func parseUpgradable(val string, f *Fault) error {
	b, err := strconv.ParseBool(val)
	if err != nil {
		return fmt.Errorf("%q: want true or false", val)
	}
	f.Upgradable = &b
	return nil
}

// parseReentryItem reads rebuilt[=AFTER[/TIMES]] or flapping[=AFTER[/TIMES]], over the fault's
// defaults.
func parseReentryItem(key, val string, hasVal bool, f *Fault) error {
	r, set := DefaultRebuilt(), &f.Rebuilt
	if key == "flapping" {
		r, set = DefaultFlapping(), &f.Flapping
	}
	if hasVal {
		after, times, hasTimes := strings.Cut(val, "/")
		d, err := time.ParseDuration(after)
		if err != nil || d <= 0 {
			return fmt.Errorf("after %q: want a positive duration such as 40s", after)
		}
		r.After = d
		if hasTimes {
			k, err := strconv.Atoi(times)
			if err != nil || k < 1 {
				return fmt.Errorf("times %q: want a positive integer", times)
			}
			r.Times = k
		}
	}
	*set = &r
	return nil
}
