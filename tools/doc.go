// SPDX-License-Identifier: Apache-2.0

// Package tools is the root of Muster's release tools module: what builds and publishes what
// ships, apart from the lab that tests it (the sandbox module). packaging and cmd/muster-package
// write the .deb and .rpm packages (make packages) and packagesuite checks them; benchreport and
// cmd/muster-benchreport run the benchmarks behind docs/performance.md (make bench-report) as
// go test processes, so this module imports neither the sandbox nor the coordinator.
package tools
