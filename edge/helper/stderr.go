// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"bytes"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

const (
	// maxStderrLog bounds the stderr one Exec run logs.
	maxStderrLog = 2048
	// maxStderrLine bounds one logged stderr line of a persistent helper.
	maxStderrLine = 512
)

var (
	// pemBlock matches a PEM block, or the start of one cut off by the length bound.
	pemBlock = regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]+-----.*?(?:-----END [A-Z0-9 ]+-----|\z)`)
	// jwtLike matches a compact JWS: base64url header starting {" then two more segments.
	jwtLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
	// opaque matches long runs of base64 (standard or url) or hex: keys, tokens and seeds look
	// like this, words do not.
	opaque = regexp.MustCompile(`[A-Za-z0-9+/=_-]{40,}`)
	// opaqueSegment is opaque without '/': what a path's segment must not be.
	opaqueSegment = regexp.MustCompile(`[A-Za-z0-9+=_-]{40,}`)
)

// redact removes what looks like a secret from a helper's diagnostics.
func redact(s string) string {
	s = pemBlock.ReplaceAllString(s, "[redacted PEM block]")
	s = jwtLike.ReplaceAllString(s, "[redacted JWT]")
	return opaque.ReplaceAllStringFunc(s, redactRun)
}

// redactRun hides one long opaque run, unless it reads as a path: one with '/' and no capital
// letter, as file paths and URL paths in helper errors are. Random base64 of 40 characters or
// more is all but certain to hold a capital (a chance of about 1e-9 that it has none), so a key
// is not mistaken for a path; a path's segments still face the opaque rule on their own, so a
// hex token inside one is hidden. A long path with capitals is hidden too: a lost diagnostic,
// not a leaked secret.
func redactRun(run string) string {
	if strings.Contains(run, "/") && strings.IndexFunc(run, isUpper) < 0 {
		return opaqueSegment.ReplaceAllString(run, "[redacted]")
	}
	return "[redacted]"
}

func isUpper(r rune) bool { return 'A' <= r && r <= 'Z' }

// truncate shortens s to max bytes, saying how much was cut. Bytes that are not UTF-8 (a rune
// the bound splits, or any other) are replaced, never dropped: dropping one would join what the
// redaction, which ran before, saw apart ("hunt\xffer2" would read "hunter2").
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s... (%d more bytes)", strings.ToValidUTF8(s[:max], "\uFFFD"), len(s)-max)
}

// headBuffer keeps the first limit bytes written and counts the rest, so a chatty helper can
// neither block on a full pipe nor grow the edge's memory.
type headBuffer struct {
	limit   int
	buf     bytes.Buffer
	dropped int
	redact  func(text string, cut bool) string
}

func (h *headBuffer) Write(p []byte) (int, error) {
	room := h.limit - h.buf.Len()
	if room >= len(p) {
		h.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		h.buf.Write(p[:room])
	}
	h.dropped += len(p) - max(room, 0)
	return len(p), nil
}

// text is the captured stderr, redacted then bounded; the redaction sees the whole capture so a
// PEM block is recognised from its header even when the bound would cut it.
func (h *headBuffer) text() string {
	s := truncate(h.redact(h.buf.String(), h.dropped > 0), maxStderrLog)
	if h.dropped > 0 {
		s += fmt.Sprintf(" (%d bytes not captured)", h.dropped)
	}
	return s
}

// lineLogger logs a persistent helper's stderr line by line at warn. It remembers whether it is
// inside a PEM block, since a block spans lines and its last body line is short enough to pass
// the opaque-run rule.
type lineLogger struct {
	log     *slog.Logger
	helper  string
	redact  func(text string, cut bool) string
	mu      sync.Mutex
	partial []byte
	cut     bool // bytes of the partial line were dropped beyond its bound
	inPEM   bool
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			// keep at most one bounded partial line; the rest of an endless line is dropped
			room := 4*maxStderrLine - len(l.partial)
			keep := min(max(room, 0), len(p))
			l.partial = append(l.partial, p[:keep]...)
			l.cut = l.cut || keep < len(p)
			break
		}
		l.partial = append(l.partial, p[:i]...)
		l.emit()
		p = p[i+1:]
	}
	return n, nil
}

// flush logs a last line that had no newline.
func (l *lineLogger) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.emit()
	}
}

func (l *lineLogger) emit() {
	line := strings.TrimRight(string(l.partial), "\r")
	cut := l.cut
	l.partial, l.cut = l.partial[:0], false
	switch {
	case strings.Contains(line, "-----BEGIN "):
		l.inPEM = !strings.Contains(line, "-----END ")
		line = "[redacted PEM block]"
	case l.inPEM:
		if strings.Contains(line, "-----END ") {
			l.inPEM = false
		}
		return
	}
	if line = truncate(l.redact(line, cut), maxStderrLine); line != "" {
		l.log.Warn("helper stderr", "helper", l.helper, "stderr", line)
	}
}
