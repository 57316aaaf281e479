// SPDX-License-Identifier: Apache-2.0

package testkit

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// LogBuffer is a log sink safe for concurrent writers that a test reads while they write.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tail is the last n bytes written, for a failure message that must stay readable.
func (l *LogBuffer) Tail(n int) string {
	out := l.String()
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// Contains reports whether sub was written.
func (l *LogBuffer) Contains(sub string) bool { return strings.Contains(l.String(), sub) }

// Logger is a text logger writing into l from level up: tests search its lines as an operator
// would read them.
func (l *LogBuffer) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: level}))
}

// NewLogger is a debug-level Logger and the buffer it writes to.
func NewLogger() (*slog.Logger, *LogBuffer) {
	b := &LogBuffer{}
	return b.Logger(slog.LevelDebug), b
}
