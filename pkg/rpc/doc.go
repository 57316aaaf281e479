// SPDX-License-Identifier: Apache-2.0

// Package rpc is the one path by which Muster talks to a Choria server in provisioning mode.
//
// Wrapper holds the contract every call shares (retries through go-choria's backoff, the try
// limit enforced from inside the loop, the pause check before the loop and at every attempt, the
// per-attempt timer and the once-per-call error counter). Node offers the typed actions of the
// rpcutil and choria_provision agents with their try limits and reply validation. A Transport
// carries one request to one identity and returns every reply it saw: Conn multiplexes all
// requests over one long-lived broker connection and encodes protocol v1 itself (key parsed once,
// signing chosen by Signing, reply windows from Timeouts); PerCall builds go-choria's RPC client
// for each call as choria-provisioner does and stays the reference.
package rpc
