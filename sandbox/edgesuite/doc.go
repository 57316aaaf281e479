// SPDX-License-Identifier: Apache-2.0

// Package edgesuite proves the standalone edge (edge/app, what muster-edge runs) against the
// sandbox: a real embedded broker, real go-choria nodes in provisioning mode, the emulated fleet
// with its faults, and the sample helper as a real process. It holds only tests.
package edgesuite
