// SPDX-License-Identifier: Apache-2.0

// Package testkit holds the test helpers every module's tests share: a log buffer (LogBuffer),
// waits for a condition or a value (WaitFor, Poll, Receive), a throwaway certificate authority
// (CA), a free port for a child to bind (FreePort), a clock the test moves (Clock), an
// environment cleared of a prefix (IsolateEnv), latency percentiles and the process's CPU for benchmarks (Percentile,
// ReportLatency, SelfCPU), the difference of two lists for a failure (Missing) and a coordinator member
// that goes silent (Silent); the TCP proxy that partitions links is its subpackage proxy, and
// subpackage aptget installs the Debian packages a suite needs. It depends on the standard library
// only, so any module may import it from its tests without gaining a requirement; helpers that
// need the lab or the coordinator stay in those modules.
package testkit
