// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kballard/go-shellquote"

	"github.com/seed96588659/muster/sandbox/stack/edgeproc"
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

// edgeProc is a running muster-edge child of one region.
type edgeProc struct {
	*edgeproc.Edge
	region string
	grace  time.Duration
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
	e, err := edgeproc.New(edgeproc.Spec{
		Bin: bin, Config: s.config, Identity: s.client, ChoriaConfig: s.clientConfig,
		Coordinators: s.coordinators, Token: s.token, Helper: s.helperCommand(), Workers: s.workers,
		LogPath: s.logFile,
		Env:     []string{"MUSTER_EDGE_FEATURES_UPGRADES=true", "MUSTER_EDGE_FEATURES_PKI=true"},
	})
	if err != nil {
		return nil, err
	}
	if err := e.Start(); err != nil {
		return nil, err
	}
	return &edgeProc{Edge: e, region: s.region, grace: s.stopWait}, nil
}
