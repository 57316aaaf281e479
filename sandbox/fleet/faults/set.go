// SPDX-License-Identifier: Apache-2.0

package faults

// Rule applies a fault to the nodes its selector matches.
type Rule struct {
	Select Selector
	Fault  Fault
	// Source says where the rule came from ("faults.yaml:12" or `--fault "..."`), for messages.
	Source string
}

// Set is an ordered list of rules; a nil *Set has no faults.
type Set struct {
	rules []Rule
}

// NewSet builds a set from rules, in order.
func NewSet(rules ...Rule) *Set {
	return &Set{rules: append([]Rule(nil), rules...)}
}

// Rules returns a copy of the rules in order.
func (s *Set) Rules() []Rule {
	if s == nil {
		return nil
	}
	return append([]Rule(nil), s.rules...)
}

// Merge returns a set with the rules of s followed by those of o (o wins where both set a value).
func (s *Set) Merge(o *Set) *Set {
	return NewSet(append(s.Rules(), o.Rules()...)...)
}

// For is the fault of one node: every matching rule laid over the previous ones, in order.
func (s *Set) For(region, identity string, index int) Fault {
	var f Fault
	if s == nil {
		return f
	}
	for _, r := range s.rules {
		if r.Select.Matches(region, identity, index) {
			f = f.merge(r.Fault)
		}
	}
	return f
}
