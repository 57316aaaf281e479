// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// Approval holds the approval.* keys: which nodes wait in the held queue for an operator's
// approve. The zero value holds nothing.
type Approval struct {
	// Manual lists the regions (or "*") whose first-seen nodes are held.
	Manual []string
	// ReprovisionHold holds a provisioned identity that comes back in provisioning mode.
	ReprovisionHold bool
	// FlapCount re-entries into provisioning mode within FlapWindow hold a node; 0 is off.
	FlapCount  int
	FlapWindow time.Duration
}

// Reprovision values.
const (
	ReprovisionAuto = "auto"
	ReprovisionHold = "hold"
)

// parseApproval reads the approval keys' raw values, each error naming its key.
func parseApproval(manual []string, reprovision, flapping string) (Approval, error) {
	a := Approval{}
	for i, r := range manual {
		if r == "*" {
			if len(manual) > 1 {
				return a, fmt.Errorf("%s: \"*\" holds every region; list it alone", KeyApprovalManual)
			}
			continue
		}
		if err := api.ValidateName(fmt.Sprintf("%s[%d]", KeyApprovalManual, i), r); err != nil {
			return a, err
		}
	}
	a.Manual = manual
	switch strings.ToLower(reprovision) {
	case ReprovisionAuto, "":
	case ReprovisionHold:
		a.ReprovisionHold = true
	default:
		return a, fmt.Errorf("%s: %q is not %s or %s", KeyApprovalReprovision, reprovision, ReprovisionAuto, ReprovisionHold)
	}
	if flapping == "" || flapping == "off" {
		return a, nil
	}
	n, d, ok := strings.Cut(flapping, "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 2 {
		return a, fmt.Errorf("%s: %q is not N/DURATION with N at least 2 (e.g. 3/1h: three re-entries into provisioning mode within an hour), or off", KeyApprovalFlapping, flapping)
	}
	window, err := time.ParseDuration(d)
	if err != nil || window <= 0 {
		return a, fmt.Errorf("%s: %q: the window %q is not a positive duration (e.g. 3/1h, 5/30m)", KeyApprovalFlapping, flapping, d)
	}
	a.FlapCount, a.FlapWindow = count, window
	return a, nil
}

// flapHistory is the ledger.history_length a flapping count of n needs: the count reads each
// node's history, and a re-entry and its provisioning leave three entries (seen again, granted,
// provisioned).
func flapHistory(n int) int { return 3*(n-1) + 1 }

func (c *Config) validateApproval() error {
	if n := c.Approval.FlapCount; n > 0 && c.Ledger.HistoryLength < flapHistory(n) {
		return fmt.Errorf("%s: counting %d re-entries needs %s of at least %d (each re-entry and its provisioning leave 3 entries of a node's history); it is %d",
			KeyApprovalFlapping, n, KeyHistoryLength, flapHistory(n), c.Ledger.HistoryLength)
	}
	return nil
}
