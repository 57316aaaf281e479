// Package coordinator will hold Muster's Raft-replicated node ledger, lease manager and HTTP APIs.
package coordinator
