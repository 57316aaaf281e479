// SPDX-License-Identifier: Apache-2.0

package api

// PauseMark is where a pause flag an edge was told holds: the recover epoch and the log index.
//
// Answers to concurrent calls arrive in any order, so an edge keeps the flag of the newest
// answer. Within one history the log index orders them. A `recover` starts a new history whose
// indices may be lower than those the lost majority reached, so the index alone would let an
// edge that heard "resumed" at a lost index ignore a pause until the new log passes it: the
// epoch orders histories first: 1 in a cluster never recovered, then the ledger time (Unix
// nanoseconds) of the last recover's hold, which the new history's first leader writes before
// it answers an edge. 0 is a coordinator older than the field.
type PauseMark struct {
	Epoch uint64
	AsOf  uint64
}

// Older says whether an answer at m is older than the flag held at held, so it must not
// replace it. An answer without an index (a coordinator older than the field) is never older;
// an answer without an epoch (one older than that field) is ordered by its index alone.
func (m PauseMark) Older(held PauseMark) bool {
	switch {
	case m.AsOf == 0:
		return false
	case m.Epoch != 0 && held.Epoch != 0 && m.Epoch != held.Epoch:
		return m.Epoch < held.Epoch
	default:
		return m.AsOf < held.AsOf
	}
}

// Taken is the mark held once an answer at m, not Older than held, replaced held's flag: a
// newer epoch starts its indices afresh.
func (m PauseMark) Taken(held PauseMark) PauseMark {
	if m.Epoch != 0 && held.Epoch != 0 && m.Epoch != held.Epoch {
		return m
	}
	return PauseMark{Epoch: max(held.Epoch, m.Epoch), AsOf: max(held.AsOf, m.AsOf)}
}

// PauseState is the operator's pause flag as an acquire, renew or heartbeat answer carries it
// (embedded: its fields are the answer's own on the wire).
type PauseState struct {
	Paused bool `json:"paused"`
	// PauseAsOf is the log index Paused holds at: the ledger's applied index when the flag was
	// read. Answers to concurrent calls arrive in any order, so an edge takes the flag of the
	// newest answer (PauseMark); 0 from a coordinator older than the field.
	PauseAsOf uint64 `json:"pause_as_of,omitempty"`
	// PauseEpoch orders answers across a recover before PauseAsOf does (PauseMark); 0 from a
	// coordinator older than the field or a cluster never recovered.
	PauseEpoch uint64 `json:"pause_epoch,omitempty"`
}

// PauseAt is where in the log the answer's pause flag holds.
func (p PauseState) PauseAt() PauseMark { return PauseMark{Epoch: p.PauseEpoch, AsOf: p.PauseAsOf} }
