// SPDX-License-Identifier: Apache-2.0

package hostflow

import "github.com/seed96588659/muster/pkg/api"

// printable escapes the control characters of the text a result carries (api.Printable): a
// node chooses its inventory version and the status messages its errors quote, and whatever
// answers on the provisioning broker may put escape sequences there. Logs, reports and the
// terminals they reach then see them as text.
func (r Result) printable() Result {
	r.Version = api.Printable(r.Version)
	r.Target = api.Printable(r.Target)
	if r.Err != nil {
		if msg := r.Err.Error(); api.Printable(msg) != msg {
			r.Err = printableError{msg: api.Printable(msg), err: r.Err}
		}
	}
	return r
}

// printableError is an error whose text was escaped; errors.Is and As still see the original.
type printableError struct {
	msg string
	err error
}

func (e printableError) Error() string { return e.msg }
func (e printableError) Unwrap() error { return e.err }
