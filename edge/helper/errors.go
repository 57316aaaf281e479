// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrTimeout: the helper did not answer within the timeout.
	ErrTimeout = errors.New("timed out")
	// ErrEmptyOutput: the helper answered nothing.
	ErrEmptyOutput = errors.New("empty output")
	// ErrOutputTooLarge: the answer exceeded the output limit.
	ErrOutputTooLarge = errors.New("output too large")
	// ErrExit: the helper exited unsuccessfully (Exec) or exited at all (Persistent).
	ErrExit = errors.New("exited")
	// ErrInvalidJSON: the answer was not a JSON Response.
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrFailed: a persistent helper answered {"error": ...} for the request.
	ErrFailed = errors.New("failed the request")
	// ErrRestarted: the request was in flight when the persistent helper was killed and replaced.
	ErrRestarted = errors.New("restarted")
	// ErrClosed: the runner was closed.
	ErrClosed = errors.New("runner closed")
	// ErrMissingID: a persistent helper's answer line has no "id", so no request can be paired with it.
	ErrMissingID = errors.New(`answer without "id"`)
	// ErrUnmatched: a persistent helper's answer carries an id no request in flight has.
	ErrUnmatched = errors.New("answer matches no request in flight")
	// ErrWrongCertificate: the answer's certificate names neither by common name nor by DNS name the node it is for.
	ErrWrongCertificate = errors.New("certificate is not the node's")
)

// Interface assertions.
var (
	_ Runner = (*Exec)(nil)
	_ Runner = (*Persistent)(nil)
)

// decode parses an answer. Its errors never quote the answer, which may hold a private key:
// json's syntax errors quote the offending character, so only offsets and field names are kept.
func decode(name string, out []byte, v any) error {
	err := json.Unmarshal(out, v)
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("helper %s: %w: syntax error at byte %d of %d", name, ErrInvalidJSON, syn.Offset, len(out))
	case errors.As(err, &typ):
		// Value may carry the number itself ("number -5"): keep only its kind
		kind, _, _ := strings.Cut(typ.Value, " ")
		return fmt.Errorf("helper %s: %w: cannot decode a JSON %s into %s (field %q)", name, ErrInvalidJSON, kind, typ.Type, typ.Field)
	default:
		return fmt.Errorf("helper %s: %w: %d bytes do not decode as a Response", name, ErrInvalidJSON, len(out))
	}
}
