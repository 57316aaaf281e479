// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Limits on one command, so a single request cannot make an apply unbounded.
const (
	MaxBatch       = 10000
	maxIdentityLen = 255
	maxFactsLen    = 64 << 10
)

// command processing: every handler validates fully before its first write, so a refused command
// leaves the ledger unchanged while its batch-mates still apply in the same transaction.

func (l *Ledger) applyOne(t *txn, index uint64, data []byte) any {
	if len(data) == 0 {
		return fmt.Errorf("%w: empty log entry at index %d", ErrBadCommand, index)
	}
	t.command(index)
	typ := CommandType(data[0])
	body := data[1:]
	switch typ &^ IgnoreUnknown {
	case CmdRegister:
		return decodeAnd(t, body, typ, func(c *Register) (any, error) { return applyRegister(t, c) })
	case CmdGrant:
		return decodeAnd(t, body, typ, func(c *Grant) (any, error) { return applyGrant(t, index, c) })
	case CmdRenew:
		return decodeAnd(t, body, typ, func(c *Renew) (any, error) { return applyRenew(t, c) })
	case CmdReport:
		return decodeAnd(t, body, typ, func(c *Report) (any, error) { return applyReport(t, c) })
	case CmdExpire:
		return decodeAnd(t, body, typ, func(c *Expire) (any, error) { return applyExpire(t, c) })
	case CmdExtend:
		return decodeAnd(t, body, typ, func(c *Extend) (any, error) { return applyExtend(t, c) })
	case CmdPause:
		return decodeAnd(t, body, typ, func(c *Pause) (any, error) { return applyPause(t, c) })
	case CmdMember:
		return decodeAnd(t, body, typ, func(c *Member) (any, error) { return applyMember(t, c) })
	case CmdRetry:
		return decodeAnd(t, body, typ, func(c *Retry) (any, error) { return applyRetry(t, c) })
	case CmdProtocol:
		return decodeAnd(t, body, typ, func(c *SetProtocol) (any, error) { return applySetProtocol(t, c) })
	case CmdOperator:
		return decodeAnd(t, body, typ, func(c *Operator) (any, error) { return applyOperator(t, c) })
	case CmdAcquire:
		return decodeAnd(t, body, typ, func(c *Acquire) (any, error) { return applyAcquire(t, index, c) })
	case CmdHold:
		return decodeAnd(t, body, typ, func(c *Hold) (any, error) { return applyHold(t, c) })
	}
	if typ&IgnoreUnknown != 0 {
		l.log.Warn("ignoring unknown ledger command", "type", uint8(typ), "index", index)
		return nil
	}
	// Not reached: ApplyLogs halts on an unknown type before it applies its batch.
	return fmt.Errorf("%w: type %d at index %d", ErrUnknownCommand, uint8(typ), index)
}

// storageError marks an error of bbolt itself, as opposed to a refused command.
type storageError struct{ error }

// stamped is a command that carries the leader's time.
type stamped interface{ stamp() time.Time }

// decodeAnd decodes a command body and applies it; an applied command's time raises the ledger
// time a new leader anchors at (LastStamp).
// undecodable is a committed entry of a known type whose body does not decode. The leader
// encodes every command from its type, so this member's copy is corrupt (or its build cannot read
// what the cluster writes): refusing it and moving on would silently diverge this ledger from the
// others, so ApplyLogs halts the member with nothing of the batch applied.
type undecodable struct{ error }

func decodeAnd[C any](t *txn, body []byte, typ CommandType, fn func(*C) (any, error)) any {
	c := new(C)
	if err := json.Unmarshal(body, c); err != nil {
		return undecodable{fmt.Errorf("%w: decode %s: %v", ErrBadCommand, typ, err)}
	}
	res, err := fn(c)
	if err != nil {
		return err
	}
	if s, ok := any(c).(stamped); ok {
		t.saw(s.stamp())
	}
	return res
}

func validID(what, s string) error {
	switch {
	case s == "":
		return errorf("%s is empty", what)
	case len(s) > maxIdentityLen:
		return errorf("%s %.40q... is longer than %d bytes", what, s, maxIdentityLen)
	case strings.IndexByte(s, 0) >= 0:
		return errorf("%s %q contains a NUL byte", what, s)
	}
	return nil
}

func validNow(now time.Time) error {
	if now.IsZero() {
		return errorf("command carries no time")
	}
	return nil
}

// validBatch refuses a command that moves nodes without a time, under a bad policy, or with more
// than MaxBatch items (what names the command, of what its items).
func validBatch(now time.Time, p Policy, items int, what, of string) error {
	if err := validNow(now); err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if items > MaxBatch {
		return errorf("%s of %d %s exceeds the batch limit %d", what, items, of, MaxBatch)
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
