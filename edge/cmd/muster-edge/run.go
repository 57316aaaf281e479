// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
)

func runCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Discover and provision nodes until interrupted",
		Args:  cobra.NoArgs,
	}
	config.BindFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, warnings, err := config.Load(cmd.Flags())
		if err != nil {
			return &app.StartError{Err: err, Remedy: "correct the settings named above (file, MUSTER_EDGE_* variable or flag; docs/configure.md lists them) and start again"}
		}
		log, closeLog, err := logger(cfg)
		if err != nil {
			return &app.StartError{Err: err, Remedy: "make logfile's directory writable by the edge's user, or leave logfile empty to log to standard error"}
		}
		defer closeLog()
		for _, w := range warnings {
			log.Warn(w)
		}
		log.Info("configuration", "config", cfg.Redacted())

		a, err := app.Build(cmd.Context(), cfg, app.Options{Logger: log, ChoriaLog: os.Stderr})
		if err != nil {
			if cmd.Context().Err() != nil {
				// a signal while starting is a stop, not a failure
				log.Info("stopped while starting", "reason", err)
				return nil
			}
			return err
		}
		defer a.Close()
		if addr := a.MonitorAddr(); addr != nil {
			log.Info("monitor listening", "addr", addr.String())
		}
		return a.Run(cmd.Context())
	}
	return cmd
}

// logger writes slog text or JSON to logfile, or standard error when none is set.
func logger(cfg *config.Config) (*slog.Logger, func(), error) {
	var w io.Writer = os.Stderr
	closeFn := func() {}
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
		if err != nil {
			return nil, nil, fmt.Errorf("logfile: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	opts := &slog.HandlerOptions{Level: cfg.SlogLevel()}
	if cfg.LogFormat == config.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), closeFn, nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), closeFn, nil
}
