// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package realnode

// ParentEnv names the lab process a node must die with; the lab sets it when it starts a node.
const ParentEnv = "MUSTER_NODE_PARENT"

// dieWithParent has no parent-death signal to ask for off Linux.
func dieWithParent() error { return nil }
