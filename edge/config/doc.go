// SPDX-License-Identifier: Apache-2.0

// Package config holds the edge's configuration: every key of choria-provisioner's YAML file,
// unchanged, plus Muster's own keys.
//
// Values come from, highest first: command-line flags, the environment (MUSTER_EDGE_ and the key
// upper-cased with '.' as '_', e.g. MUSTER_EDGE_FEATURES_JWT), the YAML file named by --config
// (or MUSTER_EDGE_CONFIG), and the defaults.
//
// Secrets (token, broker_provisioning_password, pause_token) have no flag: a command line is
// readable by every user of the machine through ps and /proc, so they come from the file or the
// environment only.
//
// Decisions that differ from choria-provisioner, and why:
//   - workers defaults to 64, not the number of cores: an edge's work is waiting on RPC replies and
//     the helper, so it is I/O bound.
//   - interval keeps choria-provisioner's minimum of one minute for the file, the environment
//     and flags: the minimum protects the broker from discovery floods. A Config built in Go (tests) may use
//     any positive interval; Validate only asks for > 0.
//   - broker_port and rego_policy are accepted and warned about: choria-provisioner never reads
//     them (the broker address comes from the Choria client configuration, policies from the
//     helper's reply).
//   - leader_election campaigns in choria-provisioner's own election, in standalone and cluster
//     mode alike, so an edge can run beside choria-provisioner with one of them active; the
//     broker must run Choria Streams, which the edge checks at start.
//   - logfile defaults to "" (standard error); choria-provisioner's default put "info" in
//     logfile by mistake.
//   - features.jwt without jwt_verify_cert, features.ed25519 without jwt_signing_key, and
//     features.upgrades without upgrades_repository (unless upgrades_optional) stop start-up:
//     choria-provisioner accepted them and then failed every node.
//   - monitor_bind defaults to all interfaces, as choria-provisioner's monitor_port did, so the
//     Prometheus scrapes and dashboards of users who move over keep working; the pause/resume endpoint on
//     that port is enabled only when pause_token is set.
//   - pause_token has no default: the provisioning token is known to every node that boots with a
//     provisioning.jwt, so it must not also guard an operator endpoint.
package config
