// SPDX-License-Identifier: Apache-2.0

package edgeproc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/loopback"
	"github.com/seed96588659/muster/sandbox/internal/childproc"
)

// Spec is how to run one muster-edge in cluster mode.
type Spec struct {
	// Bin is the muster-edge binary.
	Bin string
	// Config is the lab region's edge configuration file (sandbox/stack/edgefile).
	Config string
	// Identity is the lab client identity the edge connects as, also its edge name towards the
	// coordinators; ChoriaConfig is that identity's Choria configuration.
	Identity     string
	ChoriaConfig string
	Coordinators []string
	// Token is the edge's coordinator token, bound to Identity and the region by the
	// coordinators. It goes in the environment, never on the command line (ps shows that).
	Token string
	// Helper is the persistent helper's command line.
	Helper string
	// Workers, when not 0, overrides the configuration's.
	Workers int
	// LogPath is the file the edge's output (and the Choria library's, on standard error) is
	// appended to, across starts.
	LogPath string
	// Args and Env are further flags and MUSTER_EDGE_* variables.
	Args []string
	Env  []string
}

// Edge is one muster-edge process that can be started again after it ended, in a process
// group of its own (so a terminal's Ctrl-C does not reach it, and its helper ends with it).
type Edge struct {
	*childproc.Proc
	// Monitor is the edge's monitor base URL (http://127.0.0.1:PORT), the same across starts.
	Monitor string
}

// New prepares (does not start) the edge of s on a free monitor port.
func New(s Spec) (*Edge, error) {
	port, err := loopback.StablePort()
	if err != nil {
		return nil, fmt.Errorf("edge %s: monitor port: %w", s.Identity, err)
	}
	args := []string{"run", "--config", s.Config, "--monitor-port", strconv.Itoa(port),
		"--choria-config", s.ChoriaConfig, "--choria-identity", s.Identity, "--edge-name", s.Identity,
		"--coordinators", strings.Join(s.Coordinators, ","), "--helper", s.Helper, "--helper-persistent"}
	if s.Workers > 0 {
		args = append(args, "--workers", strconv.Itoa(s.Workers))
	}
	return &Edge{
		Proc: &childproc.Proc{
			Name: "edge " + s.Identity, Bin: s.Bin, Args: append(args, s.Args...), LogPath: s.LogPath, Group: true,
			Env: append([]string{"MUSTER_EDGE_COORDINATOR_TOKEN=" + s.Token}, s.Env...),
		},
		Monitor: "http://127.0.0.1:" + strconv.Itoa(port),
	}, nil
}

// WaitReady polls /readyz until it answers 200; it fails when the edge exits first or ctx ends.
func (e *Edge) WaitReady(ctx context.Context) error {
	if err := e.WaitHTTP(ctx, e.Monitor+"/readyz", 100*time.Millisecond); err != nil {
		return fmt.Errorf("%w (see %s)", err, e.LogPath)
	}
	return nil
}
