// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"bytes"
	"context"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// slogWriter forwards raft's hclog lines to slog; raft wants an hclog.Logger and we do not fork it.
// Each line keeps the level of its hclog tag, which slog.NewLogLogger's fixed level would lose.
type slogWriter struct {
	log   *slog.Logger
	level slog.Level
}

func (w slogWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimSpace(p))
	level := w.level
	switch {
	case bytes.Contains(p, []byte("[ERROR]")):
		level = slog.LevelError
	case bytes.Contains(p, []byte("[WARN]")):
		level = slog.LevelWarn
	case bytes.Contains(p, []byte("[INFO]")):
		level = slog.LevelInfo
	case bytes.Contains(p, []byte("[DEBUG]")), bytes.Contains(p, []byte("[TRACE]")):
		level = slog.LevelDebug
	}
	w.log.Log(context.Background(), level, line)
	return len(p), nil
}

func newHCLogger(name string, log *slog.Logger, min slog.Level) hclog.Logger {
	lvl := hclog.Info
	switch {
	case min >= slog.LevelError:
		lvl = hclog.Error
	case min >= slog.LevelWarn:
		lvl = hclog.Warn
	case min < slog.LevelInfo:
		lvl = hclog.Debug
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:            name,
		Level:           lvl,
		Output:          slogWriter{log: log, level: slog.LevelInfo},
		DisableTime:     true,
		IncludeLocation: false,
	})
}
