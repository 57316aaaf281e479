// SPDX-License-Identifier: Apache-2.0

// Package rpcsuite proves pkg/rpc against the sandbox: a real embedded go-choria broker with
// emulated and real provisioning-mode nodes. It holds only tests and benchmarks.
package rpcsuite
