// SPDX-License-Identifier: Apache-2.0

package coordinator

import (
	"errors"
	"fmt"
)

// Ready says whether this member should receive traffic: it knows a leader (its own leadership
// established, if it leads) and has applied everything it knows to be committed, so its reads
// are current and its forwards reach a leader. A rolling restart waits on it before taking down
// the next member.
func (s *Service) Ready() error {
	_, leader := s.node.Leader()
	switch {
	case leader == "":
		return errors.New("no leader known")
	case leader == s.cfg.ID && !s.ready.Load():
		return errors.New("leading, but leadership not established yet")
	}
	applied, _, err := s.ledger.AppliedIndex()
	if err != nil {
		return fmt.Errorf("applied index: %w", err)
	}
	if commit := s.node.CommitIndex(); applied < commit {
		return fmt.Errorf("catching up: applied %d of %d committed entries", applied, commit)
	}
	return nil
}
