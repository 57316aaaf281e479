// SPDX-License-Identifier: Apache-2.0

//go:build race

package emulated

// raceEnabled: go-choria v0.30.0's choria.Connection.QueueSubscribe assigns s.subscription
// outside subMu while its copier goroutine reads it in Unsubscribe when the request context
// ends (choria/connection.go:284 vs :302). When that context ends on a deadline (broadcast
// discovery always does, and its three receivers include late ones that hear nothing), nothing
// orders the write before the read and -race may report it, in go-choria, not here; whether it
// does depends on timers, i.e. on luck. A one-receiver client (OptionWorkers(1)) ended by its
// handler after a reply, or by its own Timeout, is ordered and safe. Tests that must go
// through go-choria's own broadcast discoverer skip under -race; the others use raw requests
// built by go-choria and sent over nats.go, or one-receiver clients that get their answer.
const raceEnabled = true
