// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/edge/app"
	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/plan"
)

// Plan's own flags; it takes no flag of a configuration key but --config, so --helper is free.
const (
	flagJSON       = "json"
	flagHelper     = "helper"
	flagReaderCert = "reader-cert"
	flagReaderKey  = "reader-key"
	// configuredHelper is --helper given without a command: ask the configuration's helper.
	configuredHelper = "(configured)"
	// envReaderToken holds the coordinators' admin token, as for muster-coordinator's reads.
	envReaderToken = "MUSTER_AUTH_ADMIN_TOKEN"
)

// planFlags are plan's parsed flags.
type planFlags struct {
	config     string
	json       bool
	helper     string
	readerCert string
	readerKey  string
}

func planCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what a run would do with every node in provisioning mode, acting on none",
		Long: "plan sweeps once, reads every node's rpcutil#inventory and prints what a run would do with it:\n" +
			"provision, upgrade from X to Y, defer, shut down, skip or fail, and why. With --helper it asks the\n" +
			"configuration's helper (--helper=COMMAND: another helper) for every node; its answer is shown without\n" +
			"values. In cluster mode it reads the ledger's view of each node with the coordinators' admin token\n" +
			"(" + envReaderToken + ") or a reader certificate. It sends no choria_provision action, takes no\n" +
			"lease and registers nothing.",
		Args: planArgs,
	}
	f := &planFlags{}
	fs := cmd.Flags()
	fs.StringVar(&f.config, config.FlagConfig, "", "configuration file (the one run reads; env "+config.EnvName(config.FlagConfig)+")")
	fs.BoolVar(&f.json, flagJSON, false, "print the plan as JSON")
	fs.StringVar(&f.helper, flagHelper, "", "ask the configuration's helper for every node; --helper=COMMAND asks COMMAND (shell quoting) instead")
	fs.Lookup(flagHelper).NoOptDefVal = configuredHelper
	fs.StringVar(&f.readerCert, flagReaderCert, "", "cluster mode: PEM client certificate named in the coordinators' auth.readers")
	fs.StringVar(&f.readerKey, flagReaderKey, "", "cluster mode: PEM key of --reader-cert")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		o, cfg, warnings, err := f.options(cmd.Flags())
		if err != nil {
			return &app.StartError{Err: err, Remedy: "correct the flag or setting named above (muster-edge plan --help, docs/configure.md) and start again"}
		}
		log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
		for _, w := range warnings {
			log.Warn(w)
		}
		o.Logger, o.ChoriaLog = log, cmd.ErrOrStderr()
		report, err := app.Plan(cmd.Context(), cfg, o)
		if err != nil {
			return err
		}
		return write(cmd.OutOrStdout(), report, f.json)
	}
	return cmd
}

// planArgs refuses arguments, naming the likely slip: a helper command given after a space.
func planArgs(_ *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return fmt.Errorf("plan takes no arguments, got %q (to ask another helper, join it to the flag: --helper='COMMAND ARGS')", strings.Join(args, " "))
}

// options loads the configuration as run does (file and environment) and checks plan's flags.
func (f *planFlags) options(flags *pflag.FlagSet) (app.PlanOptions, *config.Config, []string, error) {
	var o app.PlanOptions
	if (f.readerCert == "") != (f.readerKey == "") {
		return o, nil, nil, fmt.Errorf("--%s and --%s: give both or neither", flagReaderCert, flagReaderKey)
	}
	if flags.Changed(flagHelper) && strings.TrimSpace(f.helper) == "" {
		return o, nil, nil, fmt.Errorf("--%s: empty command (give --%s alone to ask the configuration's helper)", flagHelper, flagHelper)
	}
	// Only --config reaches the configuration: plan's --helper is not the helper key's flag.
	only := pflag.NewFlagSet("plan", pflag.ContinueOnError)
	only.String(config.FlagConfig, "", "")
	if flags.Changed(config.FlagConfig) {
		if err := only.Set(config.FlagConfig, f.config); err != nil {
			return o, nil, nil, err
		}
	}
	cfg, warnings, err := config.Load(only)
	if err != nil {
		return o, nil, nil, err
	}
	if flags.Changed(flagHelper) {
		o.AskHelper = true
		if f.helper != configuredHelper {
			cfg.Helper = f.helper
		}
	}
	o.ReaderToken = strings.TrimSpace(os.Getenv(envReaderToken))
	o.ReaderCert, o.ReaderKey = f.readerCert, f.readerKey
	return o, cfg, warnings, nil
}

// write prints report as JSON or text.
func write(w io.Writer, report *plan.Report, asJSON bool) error {
	if asJSON {
		return report.WriteJSON(w)
	}
	return report.WriteText(w)
}
