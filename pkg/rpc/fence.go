// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"errors"
	"fmt"
	"time"
)

// DeadlineSource is a PauseSource that also knows when its permission to act ends: the edge's
// count of the host's lease.
type DeadlineSource interface {
	PauseSource
	// Deadline is the instant, carrying a monotonic reading of time.Now's clock, from which no
	// request may leave; false when the permission never expires.
	Deadline() (time.Time, bool)
}

// MaxStall is the longest a request may take from its last check to its publish. Between the
// two the transport only encodes (and signs, about a millisecond) the request, so a longer gap
// is a process that was stopped there (SIGSTOP, a suspended VM, a long GC pause) and wakes
// believing what it checked. It stays well below the second of lease a request needs at its
// check, so a request that passes is published before the lease ends on the edge's clock. A
// loaded machine's scheduler exceeds it now and then (374 ms under -race on two busy cores):
// that costs a rebuild of the request (Conn.prepare), not the attempt.
const MaxStall = 250 * time.Millisecond

// v1MinTTL is the least TTL go-choria's protocol v1 request schema admits ("minimum": 30 in its
// request.json): a server drops a request with a shorter one as malformed.
const v1MinTTL = 30

// fence is what one request was checked under, immediately before it is encoded, and how it is
// dated: a node accepts it while its own clock reads before created + ttl (Choria's TTL check).
type fence struct {
	pause   PauseSource
	checked time.Time
	ttl     int
	created time.Time
}

// check decides at now whether req may be sent and how it is dated so that a node refuses it
// once its lease has ended on the edge's clock: delivered late from a buffer, or sent by a
// process that was stopped after its check. ttl is the framework's, the longest it may carry.
// Protocol v1 requests are dated by the caller: their TTL is whole seconds and at least 30, so
// a lease with less left is expressed by dating the request back (created + ttl is then the
// lease's end, rounded down to the second). A v2 request is dated by go-choria while it is
// encoded, at most MaxStall after the check, and its TTL is the whole seconds left after that.
func check(req Request, now time.Time, ttl int, v1 bool) (fence, error) {
	f := fence{pause: req.Pause, checked: now, ttl: ttl, created: now}
	if req.Pause == nil {
		return f, nil
	}
	if req.Pause.Paused() {
		return f, fencedError{req: req, reason: "provisioning is paused"}
	}
	ds, ok := req.Pause.(DeadlineSource)
	if !ok {
		return f, nil
	}
	deadline, ok := ds.Deadline()
	if !ok {
		return f, nil
	}
	// A monotonic difference, applied to this reading's wall clock: the wall clock may have
	// been stepped since the deadline was counted.
	left := deadline.Sub(now)
	if !v1 {
		left -= MaxStall
		if left < time.Second {
			return f, tooShort(req, left)
		}
		f.ttl = min(ttl, int(left/time.Second))
		return f, nil
	}
	until := now.Add(left).Unix()
	if valid := time.Unix(until, 0).Sub(now); valid < time.Second {
		return f, tooShort(req, valid)
	}
	f.ttl = min(ttl, max(v1MinTTL, int(until-now.Unix())))
	f.created = time.Unix(min(now.Unix(), until-int64(f.ttl)), 0)
	return f, nil
}

// tooShort is the refusal of a request whose lease would leave a node under a second to accept it.
func tooShort(req Request, left time.Duration) error {
	return fencedError{req: req, reason: fmt.Sprintf("its lease leaves %v, under the second a Choria TTL can express", left.Round(time.Millisecond)), deadline: true}
}

// recheck repeats the check at now, immediately before the publish: the pause source again, and
// a monotonic jump since the first check (the process was stopped in between) voids the request.
func (f fence) recheck(req Request, now time.Time) error {
	if f.pause == nil {
		return nil
	}
	if stalled := now.Sub(f.checked); stalled > MaxStall {
		return fencedError{req: req, reason: fmt.Sprintf("%v passed between its check and its publish (at most %v): the process was stopped", stalled.Round(time.Millisecond), MaxStall), stalled: true}
	}
	if f.pause.Paused() {
		return fencedError{req: req, reason: "provisioning is paused"}
	}
	return nil
}

// fencedError is a request not sent because its lease could not cover it. It matches ErrPaused
// as well as ErrFenced: the host stops as it would at a pause or lease loss, and the node is not
// failed for it; and ErrDeadline when the lease had under a second left.
type fencedError struct {
	req      Request
	reason   string
	deadline bool
	stalled  bool
}

func (e fencedError) Error() string {
	return fmt.Sprintf("%s to %s not sent: %s", e.req.Label(), e.req.Identity, e.reason)
}

func (e fencedError) Is(target error) bool {
	return target == ErrFenced || target == ErrPaused || target == ErrDeadline && e.deadline || target == errStalled && e.stalled
}

// errStalled is matched by a request voided by a stall between its check and its publish.
var errStalled = errors.New("stalled between check and publish")
