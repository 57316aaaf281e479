// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"cmp"
	"slices"
	"strings"
)

// secretValues hides the configured secrets by value. The patterns of redact catch only what
// looks like a key or token; a short password or token reads as a word to them.
type secretValues struct {
	values   []string // longest first
	replacer *strings.Replacer
}

func newSecretValues(secrets []string) *secretValues {
	values := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if s != "" && !slices.Contains(values, s) {
			values = append(values, s)
		}
	}
	// The replacer tries its pairs in order at each position: longest first, so a secret that
	// holds another is hidden whole.
	slices.SortStableFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, redactedText)
	}
	return &secretValues{values: values, replacer: strings.NewReplacer(pairs...)}
}

const redactedText = "[redacted]"

// hide replaces every secret in text. When text was cut from longer output, a secret may be
// cut too: an end of text that begins a secret is hidden as well.
func (s *secretValues) hide(text string, cut bool) string {
	if len(s.values) == 0 {
		return text
	}
	tail := ""
	if cut {
	cutEnd:
		for _, v := range s.values {
			for n := len(v) - 1; n > 0; n-- {
				if strings.HasSuffix(text, v[:n]) {
					text, tail = text[:len(text)-n], redactedText
					break cutEnd
				}
			}
		}
	}
	return s.replacer.Replace(text) + tail
}
