// SPDX-License-Identifier: Apache-2.0

// Package browsersuite tests the coordinator's status page in headless Chromium, driven over the
// Chrome DevTools Protocol, against a cluster of real muster-coordinator processes. It holds
// only tests; TestMain installs Debian's chromium when it is not on PATH and builds the binary.
package browsersuite
