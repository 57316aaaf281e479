// SPDX-License-Identifier: Apache-2.0

package settings

import (
	"errors"
	"fmt"
)

// FieldError is one invalid value: the key as written in the file, and why it was refused.
type FieldError struct {
	Key    string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Key, e.Reason) }

// Errors collects at most one FieldError per key, so a value that fails to read is not also
// reported by the checks that run on what was read.
type Errors struct {
	errs []error
	seen map[string]bool
}

// Add records why key is refused, unless key already has an error.
func (e *Errors) Add(key, format string, args ...any) {
	if e.seen == nil {
		e.seen = map[string]bool{}
	}
	if e.seen[key] {
		return
	}
	e.seen[key] = true
	e.errs = append(e.errs, &FieldError{Key: key, Reason: fmt.Sprintf(format, args...)})
}

// Has reports whether key has an error.
func (e *Errors) Has(key string) bool { return e.seen[key] }

// Merge adds other's errors, in their order.
func (e *Errors) Merge(other *Errors) {
	for _, err := range other.errs {
		fe := err.(*FieldError)
		e.Add(fe.Key, "%s", fe.Reason)
	}
}

// Err joins every error, nil when there is none; errors.As finds the first.
func (e *Errors) Err() error { return errors.Join(e.errs...) }

// First is the first error recorded, nil when there is none.
func (e *Errors) First() error {
	if len(e.errs) == 0 {
		return nil
	}
	return e.errs[0]
}
