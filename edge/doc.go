// SPDX-License-Identifier: Apache-2.0

// Package edge will hold regional discovery, the work queue and the host flow that provisions
// nodes; upgrade, the decision to upgrade a node before configuring it, is its first part.
package edge
