// SPDX-License-Identifier: Apache-2.0

// Package credentialsuite runs an edge's coordinator source against a real coordinator member
// (its service and HTTP API in process, over loopback) whose credentials the test changes: what
// an operator sees of an edge the coordinators refuse.
package credentialsuite
