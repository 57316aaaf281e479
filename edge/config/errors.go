// SPDX-License-Identifier: Apache-2.0

package config

import "fmt"

// FieldError is one invalid value: the key as written in the file, and why it was refused.
// Load and Validate join one per key with errors.Join; errors.As finds the first.
type FieldError struct {
	Key    string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Key, e.Reason) }

// fieldErrors collects at most one error per key, so a value that fails to read is not also
// reported by the checks that run on what was read.
type fieldErrors struct {
	errs []error
	seen map[string]bool
}

func (f *fieldErrors) add(key, format string, args ...any) {
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	if f.seen[key] {
		return
	}
	f.seen[key] = true
	f.errs = append(f.errs, &FieldError{Key: key, Reason: fmt.Sprintf(format, args...)})
}

func (f *fieldErrors) merge(other fieldErrors) {
	for _, err := range other.errs {
		fe := err.(*FieldError)
		f.add(fe.Key, "%s", fe.Reason)
	}
}
