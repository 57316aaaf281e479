// SPDX-License-Identifier: Apache-2.0

// Package lab starts a whole local Choria fleet: per region an embedded provisioning broker,
// real go-choria nodes (one process each) and an emulated fleet, plus a loopback updates
// repository, all recording into DIR/actions.jsonl and described by DIR/lab.json.
//
// Identities: real nodes are real-REGION-N (N from 1), emulated ones emu-REGION-NNNNN, clients
// edge-REGION-N.mcollective (Region.Framework sets MCOLLECTIVE_CERTNAME, which go-choria reads
// instead of $USER). go-choria's provisioning lock is real: it lasts two minutes per caller, so
// a test uses nodes or callers of its own. A real node configured with Region.ProvisionedConfig
// restarts as an ordinary server and leaves the provisioning collective; one restarted into a
// configuration without a security provider and middleware hosts falls back to go-choria's
// defaults, cannot start and exits, as a real server would. Starting 3 real and 1,000 emulated
// nodes takes about a second once the compressed release is cached (ReleaseCache); the first lab
// after a new build spends seconds compressing the node binary.
package lab

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/faults"
)

// Default versions: nodes start at BaseVersion; the updates repository offers UpgradeVersion.
const (
	DefaultBaseVersion    = "0.29.4"
	DefaultUpgradeVersion = "0.30.0"
)

// Options configure a lab.
type Options struct {
	// Dir holds everything the lab writes; created if missing.
	Dir string
	// Regions each get their own broker and fleet; default ["eu"].
	Regions []string
	// Real is the number of real node processes per region.
	Real int
	// Emulated is the number of emulated nodes per region.
	Emulated int
	// Faults apply to emulated nodes; nil means none. Of them, rebuilt and flapping also apply
	// to real nodes a rule selects by identity or glob (reentry.go): the lab restarts the node
	// process in provisioning mode, a rebuilt one from a wiped directory.
	Faults *faults.Set
	// NodeBinary is the muster-sandbox binary real nodes run a copy of (its hidden "node"
	// command). Required when Real > 0; tests get one from BuildNodeBinary.
	NodeBinary string
	// BaseVersion is what nodes report before any upgrade; default DefaultBaseVersion.
	BaseVersion string
	// Versions, when set, gives real node i of each region Versions[i % len(Versions)].
	Versions []string
	// UpgradeVersion is published in the updates repository; default DefaultUpgradeVersion.
	UpgradeVersion string
	// Clients is how many client identities each region gets (edge-<region>-<n>.mcollective); default 3.
	Clients int
	// Broken names real nodes started with an invalid configuration, to exercise failure reporting.
	Broken []string
	// StartTimeout bounds how long a real node may take to connect; default 90s.
	StartTimeout time.Duration
	// EmulatedTimeScale scales emulated restart/update delays; default 1 (see emulated.Config).
	EmulatedTimeScale float64
	// EmulatedLockWindow is the emulated nodes' provisioning lock window; default 2 minutes as
	// go-choria's. Real nodes always use go-choria's 2 minutes. A short window lets a test make
	// a second caller take over a node, i.e. construct a double provisioning.
	EmulatedLockWindow time.Duration
	// RecordDiscovery also records discovery#ping, on real and emulated nodes alike (one line
	// per node per discovery; off by default for that reason).
	RecordDiscovery bool
	// ReleaseCache keeps compressed release binaries between labs (compressing one takes
	// seconds); default <user cache dir>/muster-sandbox/releases, "off" disables it.
	ReleaseCache string
	// Streams gives each region's broker Choria Streams and go-choria's leader election bucket,
	// so choria-provisioner's leader_election, a Muster edge's, or any Choria client's election
	// works against the lab (lab.json says so per region).
	Streams bool
	// ElectionTTL is the election bucket's TTL with Streams (broker.Options.ElectionTTL);
	// default go-choria's one minute.
	ElectionTTL time.Duration
	// Logger receives the lab's own messages; nil discards them.
	Logger *slog.Logger
}

var regionRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,30}$`)

func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, fmt.Errorf("lab: Dir is required")
	}
	if len(o.Regions) == 0 {
		o.Regions = []string{"eu"}
	}
	seen := map[string]bool{}
	for _, r := range o.Regions {
		if !regionRe.MatchString(r) {
			return o, fmt.Errorf("lab: region %q: want lower-case letters, digits and '-', at most 31 characters", r)
		}
		if seen[r] {
			return o, fmt.Errorf("lab: region %q given twice", r)
		}
		seen[r] = true
	}
	if o.Real < 0 {
		return o, fmt.Errorf("lab: real node count %d is negative", o.Real)
	}
	if o.Emulated < 0 {
		return o, fmt.Errorf("lab: emulated node count %d is negative", o.Emulated)
	}
	if o.Real > 0 && o.NodeBinary == "" {
		return o, fmt.Errorf("lab: NodeBinary is required to start %d real nodes", o.Real)
	}
	if o.BaseVersion == "" {
		o.BaseVersion = DefaultBaseVersion
	}
	if o.UpgradeVersion == "" {
		o.UpgradeVersion = DefaultUpgradeVersion
	}
	if o.ElectionTTL != 0 && !o.Streams {
		return o, fmt.Errorf("lab: ElectionTTL %v without Streams: there is no election bucket", o.ElectionTTL)
	}
	if o.Clients <= 0 {
		o.Clients = 3
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 90 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch o.ReleaseCache {
	case "off":
		o.ReleaseCache = ""
	case "":
		if d, err := os.UserCacheDir(); err == nil {
			o.ReleaseCache = filepath.Join(d, "muster-sandbox", "releases")
		}
	}
	return o, nil
}

// versionFor is the starting version of real node i.
func (o Options) versionFor(i int) string {
	if len(o.Versions) > 0 {
		return o.Versions[i%len(o.Versions)]
	}
	return o.BaseVersion
}

// RealIdentity is the identity of real node i (from 1) in region.
func RealIdentity(region string, i int) string { return fmt.Sprintf("real-%s-%d", region, i) }

// EmulatedPrefix starts the identity of every emulated node in region.
func EmulatedPrefix(region string) string { return fmt.Sprintf("emu-%s-", region) }

// ClientIdentity is the identity of client n (from 1) in region, one per edge.
func ClientIdentity(region string, n int) string {
	return fmt.Sprintf("edge-%s-%d.mcollective", region, n)
}
