// SPDX-License-Identifier: Apache-2.0

// Package upgrade is the seed's upgrade decision: whether a node is upgraded before it is
// configured, refused, or configured as it is.
//
// It runs after the helper answered and before configure, as choria-provisioner's
// handleHostUpgrade does. The node is refused when upgrades_repository is unset and
// upgrades_optional is off, when its inventory carried no version, or when it did not report
// upgradable; otherwise its version and the target are compared with rpmversion and, when they
// differ, release_update is sent and the host flow ends at once so the node is provisioned again
// on the next cycle. With upgrades_optional on, a refusal or a failed release_update is logged
// and the node is configured anyway. The edge composes Step into its host flow.
package upgrade
