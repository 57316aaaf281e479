// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kballard/go-shellquote"

	"github.com/seed96588659/muster/sandbox/internal/loopback"
)

// edgeSpec is how to start the edge.
type edgeSpec struct {
	binDir string
	// config is the lab region's edge configuration file (sandbox/stack/edgefile).
	config string
	region string
	// client is the lab client identity the edge connects as, its name towards the
	// coordinators; clientConfig is that identity's Choria configuration.
	client       string
	clientConfig string
	coordinators []string
	token        string // bound to client and region by the coordinators
	broker       string
	ca           string
	caKey        string
	deferRE      string
	shutRE       string
	workers      int
	logFile      string
	upgrade      string
	stopWait     time.Duration
}

// edgeProc is a running muster-edge child in its own process group.
type edgeProc struct {
	region  string
	logPath string
	cmd     *exec.Cmd
	monitor string // http://127.0.0.1:PORT
	exited  chan struct{}
	waitErr error
	log     *os.File
	grace   time.Duration
}

// helperCommand is the sample helper's command line: persistent, configuring nodes for the
// lab's broker, asking for the upgrade version, signing CSRs with the lab CA, and deferring or
// shutting down the plan's nodes.
func (s edgeSpec) helperCommand() string {
	return shellquote.Join(filepath.Join(s.binDir, HelperName), "--persistent",
		"--broker", s.broker, "--upgrade", s.upgrade, "--ca", s.ca, "--ca-key", s.caKey,
		"--defer", s.deferRE, "--shutdown", s.shutRE)
}

// startEdge runs muster-edge in cluster mode with the lab region's configuration file, upgrades
// and PKI on, its log (and the Choria library's, which goes to standard error) in logFile, never
// on the terminal.
func startEdge(s edgeSpec) (*edgeProc, error) {
	bin := filepath.Join(s.binDir, EdgeName)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("edge binary: %w (run make build)", err)
	}
	if _, err := os.Stat(filepath.Join(s.binDir, HelperName)); err != nil {
		return nil, fmt.Errorf("helper binary: %w (run make build)", err)
	}
	port, err := loopback.Port()
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(s.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("edge log: %w", err)
	}
	args := []string{"run", "--config", s.config, "--monitor-port", strconv.Itoa(port),
		"--helper", s.helperCommand(), "--helper-persistent",
		"--choria-identity", s.client, "--edge-name", s.client, "--choria-config", s.clientConfig,
		"--coordinators", strings.Join(s.coordinators, ",")}
	if s.workers > 0 {
		args = append(args, "--workers", strconv.Itoa(s.workers))
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"MUSTER_EDGE_FEATURES_UPGRADES=true",
		"MUSTER_EDGE_FEATURES_PKI=true",
		// The token goes in the environment, never on the command line (ps shows that).
		"MUSTER_EDGE_COORDINATOR_TOKEN="+s.token,
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group keeps the terminal's Ctrl-C away from it, so the edge stops when we
	// say and in our order; Pdeathsig kills it if this process dies without stopping it.
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	e := &edgeProc{region: s.region, logPath: s.logFile, cmd: cmd, monitor: "http://127.0.0.1:" + strconv.Itoa(port), exited: make(chan struct{}), log: logf, grace: s.stopWait}
	go func() {
		e.waitErr = cmd.Wait()
		close(e.exited)
	}()
	return e, nil
}

// PID is the edge's process id.
func (e *edgeProc) PID() int { return e.cmd.Process.Pid }

// waitReady polls /readyz until it answers 200, the edge exits, or ctx ends.
func (e *edgeProc) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.monitor+"/readyz", nil)
		if err != nil {
			return fmt.Errorf("edge readyz: %w", err)
		}
		if res, err := client.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-e.exited:
			return fmt.Errorf("edge exited before it was ready: %v", e.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("edge not ready: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, then SIGKILL to the process group after the grace period, and waits.
func (e *edgeProc) stop() error {
	defer e.log.Close()
	select {
	case <-e.exited:
		return e.exitError()
	default:
	}
	if err := e.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop edge %s: %w", e.region, err)
	}
	t := time.NewTimer(e.grace)
	defer t.Stop()
	select {
	case <-e.exited:
		return e.exitError()
	case <-t.C:
		killGroup(e.PID())
		<-e.exited
		return fmt.Errorf("edge %s did not stop within %v of SIGTERM and was killed", e.region, e.grace)
	}
}

// exitError is the edge's exit status once it has ended; a SIGTERM stop is a clean end.
func (e *edgeProc) exitError() error {
	if e.waitErr == nil {
		return nil
	}
	return fmt.Errorf("edge %s: %w", e.region, e.waitErr)
}
