// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/seed96588659/muster/pkg/api"
)

// readBody reads the whole body within the size limit, so it can be validated here and then
// forwarded to the leader byte for byte.
func readBody(r *http.Request, w http.ResponseWriter, limit int64) ([]byte, *apiError) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: api.CodeBodyTooLarge,
				msg: fmt.Sprintf("request body is larger than the limit of %d bytes", mbe.Limit)}
		}
		return nil, badRequest(api.CodeMalformed, fmt.Sprintf("read request body: %v", err))
	}
	return body, nil
}

// decodeStrict decodes exactly one JSON object into v: unknown fields, wrong types and trailing
// data are refused with a message naming the problem. An empty body is allowed only if emptyOK.
func decodeStrict(body []byte, v any, emptyOK bool) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return nil
		}
		return badRequest(api.CodeMalformed, "request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return badRequest(api.CodeMalformed, fmt.Sprintf("trailing data after the JSON object at byte offset %d", dec.InputOffset()))
	}
	// dec.More misses a lone closing bracket; a second Decode sees everything but whitespace.
	if _, err := dec.Token(); err != io.EOF {
		return badRequest(api.CodeMalformed, fmt.Sprintf("trailing data after the JSON object at byte offset %d", dec.InputOffset()))
	}
	return nil
}

func decodeError(err error) *apiError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest(api.CodeMalformed, fmt.Sprintf("malformed JSON at byte offset %d: %v", se.Offset, se))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest(api.CodeMalformed, "malformed JSON: the body ends before the object does")
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return badRequest(api.CodeMalformed, fmt.Sprintf("expected a JSON object, got a JSON %s", te.Value))
		}
		return badRequest(api.CodeBadRequest, fmt.Sprintf("field %s: expected %s, got a JSON %s", field, te.Type, te.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest(api.CodeUnknownField, strings.TrimPrefix(err.Error(), "json: ")+" is not accepted")
	}
	// Errors from a field's own UnmarshalJSON (e.g. a Duration) name the value already.
	return badRequest(api.CodeBadRequest, fmt.Sprintf("invalid request body: %v", err))
}
