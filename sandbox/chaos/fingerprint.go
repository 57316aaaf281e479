// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// ledgersAgreeWithin bounds the wait for every member to apply the same index after a round;
// an idle cluster writes an entry only when a lease expires.
const ledgersAgreeWithin = 20 * time.Second

// LedgerCheck compares the members' ledgers after a round. The edges' histories see only what
// the leader answers; a member whose state machine diverged answers only once it leads, perhaps
// rounds later, and a fault may wipe it first. Members that applied the same log hold the same
// ledger, so one fingerprint at one index that differs is the defect itself, found where it
// happened.
type LedgerCheck struct {
	// Index is the applied index every member answered, 0 when they were not compared.
	Index uint64
	// Diverged names each member whose digest differs from the first member's at Index.
	Diverged []string
	// Skipped says why the ledgers were not compared (a member on the previous build answers no
	// fingerprint; the members never stood at one index).
	Skipped string
}

// Short is the check in a few words.
func (l LedgerCheck) Short() string {
	switch {
	case len(l.Diverged) > 0:
		return fmt.Sprintf("DIVERGED at index %d", l.Index)
	case l.Index > 0:
		return fmt.Sprintf("agree at index %d", l.Index)
	default:
		return "not compared: " + l.Skipped
	}
}

// checkLedgers reads every member's fingerprint until all answer the same index, then compares.
func (r *Runner) checkLedgers(ctx context.Context) LedgerCheck {
	if r.onPrevious {
		return LedgerCheck{Skipped: "members on the previous build"}
	}
	var out LedgerCheck
	err := waitFor(ctx, "every member's ledger at one index", ledgersAgreeWithin, func() (bool, string) {
		fps := make([]api.Fingerprint, len(r.cluster.Members))
		for i, m := range r.cluster.Members {
			fp, err := r.cluster.FingerprintOf(ctx, m)
			if err != nil {
				return false, err.Error()
			}
			fps[i] = fp
		}
		if slices.ContainsFunc(fps, func(fp api.Fingerprint) bool { return fp.AppliedIndex != fps[0].AppliedIndex }) {
			var at []string
			for i, fp := range fps {
				at = append(at, fmt.Sprintf("%s at %d", r.cluster.Members[i].ID, fp.AppliedIndex))
			}
			return false, strings.Join(at, ", ")
		}
		out.Index = fps[0].AppliedIndex
		for i, fp := range fps[1:] {
			if fp.Digest != fps[0].Digest {
				out.Diverged = append(out.Diverged, fmt.Sprintf("%s digest %.16s, %s digest %.16s", r.cluster.Members[i+1].ID, fp.Digest, r.cluster.Members[0].ID, fps[0].Digest))
			}
		}
		return true, ""
	})
	if err != nil {
		out.Skipped = err.Error()
	}
	return out
}
