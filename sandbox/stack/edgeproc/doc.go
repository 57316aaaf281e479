// SPDX-License-Identifier: Apache-2.0

// Package edgeproc runs real muster-edge processes in cluster mode on a lab region, for the
// chaos run and make run: an Edge is one process (its flags, its environment, its log file,
// start, readiness, stop, kill, pause and a start again after it ended). What differs between
// callers (the helper's command line, call history, a state directory, features) is a field of
// Spec.
package edgeproc
