// SPDX-License-Identifier: Apache-2.0

package packaging

// Spec is one package: its binary, units, configuration and directories, by repository path.
type Spec struct {
	Name        string   // package name, also the binary's name in bin/ and /usr/bin
	Summary     string   // one line, under 80 characters
	Description string   // the paragraph dpkg -s and rpm -qi show below the summary
	Units       []string // deploy/systemd files installed into the systemd unit directory
	Configs     []Config // example configuration under /etc/muster, kept on upgrade
	Dirs        []Dir    // directories the package owns beyond the parents of its files
	Docs        []string // docs/ files installed into /usr/share/doc/NAME
	// Restart names the units a removal stops and an upgrade restarts when they run (shell
	// words: a template's instances by glob).
	Restart string
}

// Config is one configuration file: installed once, never overwritten by an upgrade.
type Config struct {
	Src  string // repository path
	Dst  string // /etc/muster/...
	Mode uint32
}

// Dir is a directory with its owner and mode.
type Dir struct {
	Path  string
	Owner string
	Group string
	Mode  uint32
}

// User is the system user (and group of the same name) both services run as (User= in the units).
const User = "muster"

// Specs are the packages make packages builds.
func Specs() []Spec {
	return []Spec{
		{
			Name:    "muster-coordinator",
			Summary: "Muster coordinator: Raft node ledger and lease authority",
			Description: "One member of Muster's coordinator cluster (three or five make one). The\n" +
				"members replicate the ledger of Choria nodes with Raft and hand out leases\n" +
				"with fencing tokens, so that Muster edges in every region provision at once\n" +
				"and no two edges ever provision the same node.",
			Units: []string{"deploy/systemd/muster-coordinator.service"},
			Configs: []Config{
				{Src: "deploy/config/coordinator.yaml", Dst: "/etc/muster/coordinator.yaml", Mode: 0o644},
				// The tokens: read by systemd (EnvironmentFile=) as root, by nobody else.
				{Src: "deploy/systemd/coordinator.env.example", Dst: "/etc/muster/coordinator.env", Mode: 0o600},
			},
			Dirs: []Dir{
				{Path: "/etc/muster", Owner: "root", Group: "root", Mode: 0o755},
				// The member's certificate and key (tls.cert, tls.key): readable by the service only.
				{Path: "/etc/muster/tls", Owner: "root", Group: User, Mode: 0o750},
				// data_dir, the unit's StateDirectory: Raft log, snapshots and the ledger.
				{Path: "/var/lib/muster-coordinator", Owner: User, Group: User, Mode: 0o700},
			},
			Docs:    []string{"docs/cluster.md", "docs/configure.md", "docs/failover.md", "docs/metrics.md"},
			Restart: "muster-coordinator.service",
		},
		{
			Name:    "muster-edge",
			Summary: "Muster edge: provisions the Choria nodes of one region",
			Description: "The Muster edge of one region finds Choria servers in provisioning mode,\n" +
				"asks the site helper for their configuration (choria-provisioner's helper\n" +
				"protocol), upgrades them when needed, then configures and restarts them.\n" +
				"It runs alone as choria-provisioner's successor or with a coordinator\n" +
				"cluster; muster-edge@REGION runs the edge of one region.",
			Units: []string{"deploy/systemd/muster-edge@.service"},
			Configs: []Config{
				{Src: "deploy/config/edge.yaml", Dst: "/etc/muster/edge-eu.yaml", Mode: 0o644},
				{Src: "deploy/systemd/edge.env.example", Dst: "/etc/muster/edge-eu.env", Mode: 0o600},
			},
			Dirs: []Dir{
				{Path: "/etc/muster", Owner: "root", Group: "root", Mode: 0o755},
				// The edge's Choria client configuration, certificates and JWT signer.
				{Path: "/etc/muster/edge", Owner: "root", Group: User, Mode: 0o750},
				// No state directory: each muster-edge@REGION gets /var/lib/muster-edge-REGION
				// from its unit's StateDirectory= when it starts.
			},
			Docs:    []string{"docs/install.md", "docs/configure.md", "docs/helper.md", "docs/upgrades.md", "docs/migrating.md", "docs/metrics.md"},
			Restart: "'muster-edge@*.service'",
		},
	}
}
