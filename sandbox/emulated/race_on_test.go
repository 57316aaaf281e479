// SPDX-License-Identifier: Apache-2.0

//go:build race

package emulated

// raceEnabled: go-choria v0.30.0's choria.Connection.QueueSubscribe assigns s.subscription
// outside subMu while its copier goroutine reads it in Unsubscribe when the request context
// ends (choria/connection.go:284 vs :302). Every go-choria client request that ends on its
// timeout (broadcast discovery always does) is reported by the race detector, in go-choria,
// not here. Tests that must go through go-choria's own broadcast discoverer skip under -race;
// the others use raw requests built by go-choria and sent over nats.go.
const raceEnabled = true
