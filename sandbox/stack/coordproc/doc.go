// SPDX-License-Identifier: Apache-2.0

// Package coordproc runs real muster-coordinator processes for the sandbox's suites, the chaos
// run and make run: a Member is one serve process (its flags, data directory, log file, start,
// stop, kill and restart), a Cluster is members that bootstrap and join, and waits for a ready
// leader. What differs between callers (lease settings, proxies in front of the advertised
// addresses, a process group that dies with the caller) is a field of Spec.
package coordproc
