// SPDX-License-Identifier: Apache-2.0

package benchreport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/seed96588659/muster/pkg/gobuild"
)

// GoTest runs invocations with the go command in a checkout of the repository, keeping each
// one's whole output in LogDir.
type GoTest struct {
	Root   string
	LogDir string
	runs   int
}

// unsafeName is what a log file's name leaves out of a -bench pattern.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Run runs go test in inv's module. Cancelling ctx kills its whole process group: the test
// binary and what it started (labs, provisioners, coordinators) along with go.
func (g *GoTest) Run(ctx context.Context, inv Invocation) ([]byte, error) {
	g.runs++
	logPath := filepath.Join(g.LogDir, fmt.Sprintf("%02d-%s.log", g.runs, unsafeName.ReplaceAllString(inv.Bench, "_")))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "# %s\n", inv.Command())

	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", inv.Args()...)
	cmd.Dir = filepath.Join(g.Root, inv.Module)
	cmd.Env = append(gobuild.Env(), inv.Env...)
	cmd.Stdout = io.MultiWriter(&stdout, logFile)
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%w (log %s)", err, logPath)
	}
	return stdout.Bytes(), nil
}
