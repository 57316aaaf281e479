// SPDX-License-Identifier: Apache-2.0

// Command muster-benchreport runs the benchmarks behind docs/performance.md, each `go test -bench`
// invocation as its own process, and prints the machine and the figures as markdown tables with
// the command that reproduces each row (make bench-report). Progress goes to stderr.
//
//	muster-benchreport --root . --choria-provisioner /tmp/choria-provisioner/choria-provisioner > report.md
//	muster-benchreport --root . --quick      # 100-node labs, a 10,000-node ledger: the tooling only
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/seed96588659/muster/pkg/gobuild"
	"github.com/seed96588659/muster/tools/benchreport"
)

func main() {
	root := flag.String("root", ".", "the repository's root, where make build put bin/")
	choriaProvisioner := flag.String("choria-provisioner", os.Getenv("MUSTER_CHORIA_PROVISIONER_BIN"), "choria-provisioner's binary (default $MUSTER_CHORIA_PROVISIONER_BIN); without it its rows are not run")
	deprecated := deprecatedNames(flag.CommandLine)
	quick := flag.Bool("quick", false, "tiny sizes that check the tooling in minutes; not the published figures")
	logDir := flag.String("logs", "", "directory for each invocation's whole output (default: a new temporary one)")
	flag.Parse()
	deprecated.apply(flag.CommandLine, choriaProvisioner, os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *root, *choriaProvisioner, *quick, *logDir); err != nil {
		fmt.Fprintln(os.Stderr, "muster-benchreport:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root, choriaProvisioner string, quick bool, logDir string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("root: %w", err)
	}
	sizes := benchreport.FullSizes()
	if quick {
		sizes = benchreport.QuickSizes()
	}
	choriaProvisionerDesc := ""
	if choriaProvisioner == "" {
		fmt.Fprintf(os.Stderr, "MUSTER_CHORIA_PROVISIONER_BIN is unset: choria-provisioner's rows will read %q\n", benchreport.ChoriaProvisionerUnset)
	} else {
		if choriaProvisioner, err = filepath.Abs(choriaProvisioner); err != nil {
			return fmt.Errorf("choria-provisioner: %w", err)
		}
		if _, err := os.Stat(choriaProvisioner); err != nil {
			return fmt.Errorf("MUSTER_CHORIA_PROVISIONER_BIN: %w", err)
		}
		choriaProvisionerDesc = choriaProvisioner + " (" + choriaProvisionerVersion(ctx, choriaProvisioner) + ")"
	}
	if logDir == "" {
		if logDir, err = os.MkdirTemp("", "muster-benchreport-"); err != nil {
			return fmt.Errorf("log dir: %w", err)
		}
	} else if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fmt.Errorf("log dir: %w", err)
	}
	fmt.Fprintln(os.Stderr, "logs of every run in", logDir)

	goVersion, err := output(ctx, root, "go", "env", "GOVERSION")
	if err != nil {
		return err
	}
	proc := os.DirFS("/proc")
	machine, err := benchreport.ReadMachine(proc, runtime.NumCPU(), goVersion)
	if err != nil {
		return err
	}
	commit, err := output(ctx, root, "git", "describe", "--always", "--dirty", "--abbrev=12")
	if err != nil {
		return err
	}
	report := benchreport.Report{Machine: machine, ChoriaProvisioner: choriaProvisionerDesc, Commit: commit, Sizes: sizes.Name, Tables: benchreport.Plan(sizes, choriaProvisioner)}
	if report.LoadBefore, err = benchreport.ReadLoad(proc); err != nil {
		return err
	}
	report.Start = time.Now()
	report.Outcomes = benchreport.Execute(ctx, report.Tables, &benchreport.GoTest{Root: root, LogDir: logDir}, os.Stderr)
	report.End = time.Now()
	if report.LoadAfter, err = benchreport.ReadLoad(proc); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	return benchreport.Render(os.Stdout, report)
}

// choriaProvisionerVersion is what choria-provisioner says its version is, or why it said
// nothing. Its parser checks that the default Choria client configuration exists even for
// --version, hence one that always does.
func choriaProvisionerVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version", "--choria-config", os.DevNull).CombinedOutput()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return "version " + v
	}
	return fmt.Sprintf("version unknown: --version: %v", err)
}

// output runs a command in dir and returns its trimmed standard output.
func output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = gobuild.Env()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
