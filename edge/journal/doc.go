// SPDX-License-Identifier: Apache-2.0

// Package journal is the cluster edge's write-ahead record of the calls that take a node out of
// provisioning mode: restart, release_update and shutdown. Once such a call is sent, nothing
// but the edge's report tells the ledger what happened: the node no longer answers the
// provisioning agent. An edge killed between the call and its report would leave the ledger
// believing the node still waits, and every later lease on it would fail. So the intent is on
// disk (fsynced) before the call goes out, and closed once the report was answered; an edge
// that starts with open intents settles them by rediscovery and reports them late under their
// original lease id and token: the ledger records a late provisioned or shutdown result of the
// lease that granted the node (an upgrade_sent only while that lease still lives).
//
// One file of JSON lines, appended; a torn last line (a kill mid-write) is ignored, any other
// unreadable line refuses to open. Intents are grouped into one fsync while others wait for
// theirs, and an intent lingers 10 ms for others to join it, so many workers pay about one fsync
// together; the intent is written while the configure call is out, which takes longer. Closing needs no fsync: a lost close
// only replays a report the ledger refuses as already recorded.
package journal
