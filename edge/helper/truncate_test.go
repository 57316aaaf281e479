// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"strings"
	"testing"
)

// A secret split by a byte that is not UTF-8 is no secret to the redaction, which sees it
// before the bound is applied: cutting the text to its bound must not drop that byte and so
// join the halves, in a persistent helper's logged stderr line nor in an Exec's captured stderr.
func TestTruncate_JoinsNoSecretAcrossAnInvalidByte(t *testing.T) {
	secrets := newSecretValues([]string{"hunter2"})
	hide := func(s string, cut bool) string { return redact(secrets.hide(s, cut)) }
	text := "password hunt\xffer2 " + strings.Repeat("x ", 1200)

	log, buf := newTestLogger()
	l := &lineLogger{log: log, helper: "h", redact: hide}
	_, _ = l.Write([]byte(text + "\n"))
	if strings.Contains(buf.String(), "hunter2") {
		t.Errorf("the logged stderr line shows the secret: %.120s", buf.String())
	}

	h := &headBuffer{limit: 2 * maxStderrLog, redact: hide}
	_, _ = h.Write([]byte(text + strings.Repeat("y", maxStderrLog)))
	if got := h.text(); strings.Contains(got, "hunter2") {
		t.Errorf("the captured stderr shows the secret: %.120s", got)
	}
}
