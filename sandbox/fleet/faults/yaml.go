// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// ParseFile reads a faults YAML file (see Parse for the format).
func ParseFile(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read faults file: %w", err)
	}
	return Parse(data, path)
}

// Parse reads faults YAML: a list of rules, or a mapping whose only key "faults" holds the
// list. Each rule has exactly one selector (identity, glob or index "N"/"N-M"), optionally
// region, and any of: silent, duplicate, fail (list of {action, times, message}), slow
// (duration), slow_actions (list), drop_first, disconnect ({after, for}), version, upgradable,
// facts (mapping), rebuilt and flapping (true, or {after, times}). Unknown fields are refused;
// errors name the file and line.
func Parse(data []byte, name string) (*Set, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return NewSet(), nil
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: only one YAML document is allowed", name, extra.Line)
	}
	p := yamlParser{name: name}
	rules, err := p.document(&doc)
	if err != nil {
		return nil, err
	}
	return NewSet(rules...), nil
}

type yamlParser struct {
	name string
}

func (p yamlParser) errf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.name, n.Line, fmt.Sprintf(format, args...))
}

func (p yamlParser) document(doc *yaml.Node) ([]Rule, error) {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	switch root.Kind {
	case yaml.SequenceNode:
		return p.rules(root)
	case yaml.MappingNode:
		var rules []Rule
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if k.Value != "faults" {
				return nil, p.errf(k, "unknown top-level field %q (want \"faults\")", k.Value)
			}
			if v.Kind != yaml.SequenceNode {
				return nil, p.errf(v, "faults: want a list of rules")
			}
			r, err := p.rules(v)
			if err != nil {
				return nil, err
			}
			rules = append(rules, r...)
		}
		return rules, nil
	case yaml.ScalarNode:
		if root.Tag == "!!null" {
			return nil, nil
		}
	}
	return nil, p.errf(root, "want a list of fault rules or a mapping with \"faults\"")
}

func (p yamlParser) rules(seq *yaml.Node) ([]Rule, error) {
	var out []Rule
	for _, item := range seq.Content {
		r, err := p.rule(item)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (p yamlParser) rule(n *yaml.Node) (Rule, error) {
	r := Rule{Source: fmt.Sprintf("%s:%d", p.name, n.Line)}
	if n.Kind != yaml.MappingNode {
		return r, p.errf(n, "fault rule: want a mapping")
	}
	selectors := 0
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return r, p.errf(k, "field %q given twice", k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "region":
			r.Select.Region, err = p.str(k, v)
		case "identity":
			selectors++
			r.Select.Identity, err = p.str(k, v)
		case "glob":
			selectors++
			if r.Select.Glob, err = p.str(k, v); err == nil {
				if gerr := checkGlob(r.Select.Glob); gerr != nil {
					err = p.errf(v, "glob: %v", gerr)
				}
			}
		case "index":
			selectors++
			var s string
			if s, err = p.str(k, v); err == nil {
				r.Select.From, r.Select.To, err = parseIndexRange(s)
				if err != nil {
					err = p.errf(v, "%v", err)
				}
				r.Select.HasIndex = true
			}
		case "silent":
			r.Fault.Silent, err = p.boolean(k, v)
		case "duplicate":
			r.Fault.Duplicate, err = p.boolean(k, v)
		case "fail":
			r.Fault.Fails, err = p.fails(v)
		case "slow":
			r.Fault.Delay, err = p.duration(k, v)
		case "slow_actions":
			r.Fault.DelayActions, err = p.actionList(k, v)
		case "drop_first":
			r.Fault.DropFirst, err = p.count(k, v)
		case "disconnect":
			r.Fault.Disconnect, err = p.disconnect(v)
		case "version":
			r.Fault.Version, err = p.str(k, v)
		case "upgradable":
			var b bool
			if b, err = p.boolean(k, v); err == nil {
				r.Fault.Upgradable = &b
			}
		case "rebuilt":
			r.Fault.Rebuilt, err = p.reentry(k, v, DefaultRebuilt())
		case "flapping":
			r.Fault.Flapping, err = p.reentry(k, v, DefaultFlapping())
		case "facts":
			if v.Kind != yaml.MappingNode {
				err = p.errf(v, "facts: want a mapping")
				break
			}
			var m map[string]any
			if derr := v.Decode(&m); derr != nil {
				err = p.errf(v, "facts: %v", derr)
			}
			r.Fault.Facts = m
		default:
			err = p.errf(k, "unknown field %q in fault rule", k.Value)
		}
		if err != nil {
			return r, err
		}
	}
	if selectors != 1 {
		return r, p.errf(n, "fault rule needs exactly one of identity, glob or index (found %d)", selectors)
	}
	if r.Fault.Rebuilt != nil && r.Fault.Flapping != nil {
		return r, p.errf(n, "a node is rebuilt or flapping, not both: give one of them")
	}
	if len(r.Fault.DelayActions) > 0 && r.Fault.Delay == 0 {
		return r, p.errf(n, "slow_actions given without slow")
	}
	return r, nil
}

func (p yamlParser) str(k, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode || v.Value == "" {
		return "", p.errf(v, "%s: want a non-empty string", k.Value)
	}
	return v.Value, nil
}

func (p yamlParser) boolean(k, v *yaml.Node) (bool, error) {
	if v.Kind != yaml.ScalarNode {
		return false, p.errf(v, "%s: want true or false", k.Value)
	}
	b, err := strconv.ParseBool(v.Value)
	if err != nil {
		return false, p.errf(v, "%s: want true or false, got %q", k.Value, v.Value)
	}
	return b, nil
}

func (p yamlParser) count(k, v *yaml.Node) (int, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, p.errf(v, "%s: want a positive integer", k.Value)
	}
	c, err := strconv.Atoi(v.Value)
	if err != nil || c < 1 {
		return 0, p.errf(v, "%s: want a positive integer, got %q", k.Value, v.Value)
	}
	return c, nil
}

func (p yamlParser) duration(k, v *yaml.Node) (time.Duration, error) {
	if v.Kind != yaml.ScalarNode {
		return 0, p.errf(v, "%s: want a duration such as 2s", k.Value)
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil || d <= 0 {
		return 0, p.errf(v, "%s: want a positive duration such as 2s, got %q", k.Value, v.Value)
	}
	return d, nil
}

func (p yamlParser) action(k, v *yaml.Node) (string, error) {
	s, err := p.str(k, v)
	if err != nil {
		return "", err
	}
	a, err := NormalizeAction(s)
	if err != nil {
		return "", p.errf(v, "%s: %v", k.Value, err)
	}
	return a, nil
}

func (p yamlParser) actionList(k, v *yaml.Node) ([]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, p.errf(v, "%s: want a list of actions", k.Value)
	}
	var out []string
	for _, item := range v.Content {
		a, err := p.action(k, item)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func (p yamlParser) fails(v *yaml.Node) ([]Fail, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, p.errf(v, "fail: want a list of {action, times, message}")
	}
	var out []Fail
	for _, item := range v.Content {
		var f Fail
		err := p.object(item, "fail", "fail: want a mapping with action, times and optional message", setters{
			"action":  into(&f.Action, p.action),
			"times":   into(&f.Times, p.count),
			"message": into(&f.Message, p.str),
		})
		if err != nil {
			return nil, err
		}
		if f.Action == "" || f.Times == 0 {
			return nil, p.errf(item, "fail: action and times are required")
		}
		out = append(out, f)
	}
	return out, nil
}

func (p yamlParser) disconnect(v *yaml.Node) (*Disconnect, error) {
	d := &Disconnect{}
	err := p.object(v, "disconnect", "disconnect: want a mapping with after and optional for", setters{
		"after": into(&d.After, p.action),
		"for":   into(&d.For, p.duration),
	})
	if err != nil {
		return nil, err
	}
	if d.After == "" {
		return nil, p.errf(v, "disconnect: after is required")
	}
	return d, nil
}

// reentry reads rebuilt or flapping: true (the defaults def), false (none), or a mapping with
// after and times over def.
func (p yamlParser) reentry(k, v *yaml.Node, def Reentry) (*Reentry, error) {
	if v.Kind == yaml.ScalarNode {
		on, err := strconv.ParseBool(v.Value)
		if err != nil {
			return nil, p.errf(v, "%s: want true, false or a mapping with after and times, got %q", k.Value, v.Value)
		}
		if !on {
			return nil, nil
		}
		return &def, nil
	}
	r := def
	err := p.object(v, k.Value, k.Value+": want true, false or a mapping with after and times", setters{
		"after": into(&r.After, p.duration),
		"times": into(&r.Times, p.count),
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// setters read the fields of a mapping, by key.
type setters map[string]func(k, v *yaml.Node) error

// into is the setter that parses a field's value with parse and stores it in dst.
func into[T any](dst *T, parse func(k, v *yaml.Node) (T, error)) func(k, v *yaml.Node) error {
	return func(k, v *yaml.Node) (err error) {
		*dst, err = parse(k, v)
		return err
	}
}

// object reads the mapping v (anything else fails with want) field by field, in order, through
// set; a key set has no setter for is refused as an unknown field in what.
func (p yamlParser) object(v *yaml.Node, what, want string, set setters) error {
	if v.Kind != yaml.MappingNode {
		return p.errf(v, "%s", want)
	}
	return fields(v, func(k, val *yaml.Node) error {
		f, ok := set[k.Value]
		if !ok {
			return p.errf(k, "unknown field %q in %s", k.Value, what)
		}
		return f(k, val)
	})
}

// fields calls fn with each key and value of a mapping node, in order, until fn fails.
func fields(m *yaml.Node, fn func(k, v *yaml.Node) error) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if err := fn(m.Content[i], m.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}
