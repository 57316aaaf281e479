// SPDX-License-Identifier: Apache-2.0

package api

import (
	"strings"
	"time"
)

// Why a node is held (Hold.Reason): each waits for an operator's approve (VerbApprove) or ban.
const (
	// HoldManual is a first-seen node of a region listed in approval.manual.
	HoldManual = "manual"
	// HoldReprovision is a provisioned identity that came back in provisioning mode while
	// approval.reprovision is hold: a rebuild, a clone or an impostor.
	HoldReprovision = "reprovision"
	// HoldFlapping is an identity that re-entered provisioning mode as often as approval.flapping
	// allows within its window.
	HoldFlapping = "flapping"
	// HoldDuplicateResponder is a node whose edge saw a second responder to a credential-making
	// action: two machines answer to one identity.
	HoldDuplicateResponder = "duplicate_responder"
)

// HoldReasons lists the reasons a node is held.
func HoldReasons() []string {
	return []string{HoldManual, HoldReprovision, HoldFlapping, HoldDuplicateResponder}
}

// Hold is why, when and by which edge's sighting or result a node was held.
type Hold struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	Edge   string    `json:"edge,omitempty"`
	// Detail is what to check before approving (the last provisioning's time and edge, the
	// re-entries counted, the duplicate responder's error).
	Detail string `json:"detail,omitempty"`
}

// DuplicateResponderPrefix starts the error of a failed result whose edge saw a second
// responder (pkg/rpc.DuplicateResponderError). It is how an edge reports one to a coordinator:
// the outcome stays failed, which every coordinator build takes (the admin API refuses unknown
// fields and outcomes), and from cluster protocol 8 the ledger holds the node instead of
// retrying it.
const DuplicateResponderPrefix = HoldDuplicateResponder + ":"

// IsDuplicateResponder reports whether r is a failed result naming a second responder.
func (r NodeResult) IsDuplicateResponder() bool {
	return r.Outcome == OutcomeFailed && strings.HasPrefix(r.Error, DuplicateResponderPrefix)
}
