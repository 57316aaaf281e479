// SPDX-License-Identifier: Apache-2.0

// Package election takes part in choria-provisioner's leader election: go-choria's Choria
// Streams election (providers/election/streams), key `provisioner` of the bucket
// CHORIA_LEADER_ELECTION, reached by a client of the provisioning account under the
// choria.streams API prefix, which go-choria's broker imports from its Choria account for that
// one key. A Muster edge and choria-provisioner campaigning there are one election: exactly
// one of them leads.
//
// The timing is go-choria's: a leader renews its key every campaign (choria-provisioner's
// backoff.TwentySec, whose first step is 0.25 to 0.75 s), a candidate tries again after a
// growing pause of up to 20 s (10 to 30 s with jitter), and a leader that stops renewing keeps
// the key until the bucket's TTL (the broker's plugin.choria.network.stream.leader_election_ttl,
// one minute by default) has passed. A winner is told one campaign after its key was written.
package election
