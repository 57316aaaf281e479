// SPDX-License-Identifier: Apache-2.0

// Package deploysuite checks deploy/ and docs/ against the code: every example configuration
// loads through the real loaders, every manifest and unit parses and agrees with the binaries'
// flags and endpoints, the Prometheus rules pass promtool, every metric the dashboard and the
// rules name is exported by a running edge and coordinator, and docs/configure.md lists every
// key with the default the code has. It holds tests only.
package deploysuite
