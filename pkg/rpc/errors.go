// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"errors"
	"fmt"
)

// LockedMessage is the status message go-choria's provision agent answers while another caller
// holds the node's provisioning lock.
const LockedMessage = "Could not obtain provisioning lock"

var (
	// ErrMaxTries is returned when every allowed attempt of an action failed.
	ErrMaxTries = errors.New("maximum tries reached")
	// ErrPaused is matched by the error of a call refused or stopped because provisioning is paused.
	ErrPaused = errors.New("provisioning is paused")
	// ErrLocked is matched when the node's provisioning lock belongs to another caller: another
	// worker owns the node, so the call ends at once without further tries.
	//lint:ignore ST1005 the node's own status message, kept verbatim so logs match the agent's
	ErrLocked = errors.New(LockedMessage)
	// ErrResponseCount is matched when a call did not receive exactly one reply.
	ErrResponseCount = errors.New("unexpected number of responses")
	// ErrInvalidResponse is matched when the node answered with a status other than OK.
	ErrInvalidResponse = errors.New("invalid response")
	// ErrEmptyConfiguration is matched when configure was given nothing to configure.
	ErrEmptyConfiguration = errors.New("empty configuration")
	// ErrLeft is matched when a restart, release_update or shutdown got no reply and the node's
	// presence check (SetPresence) no longer finds it in provisioning mode: it acted on the call.
	ErrLeft = errors.New("the node left provisioning mode")
	// ErrUnanswered is matched when a restart, release_update or shutdown failed for any reason
	// (tries used up, paused, the caller stopped) after its last try was sent and never answered:
	// the agent answers nothing once it has acted, so only rediscovery can tell what the node did.
	ErrUnanswered = errors.New("its last try was sent and never answered")
	// ErrDuplicateResponder is matched when a second responder answered a credential-making
	// action (CredentialAction) of the node: the flow stops before any key is used.
	ErrDuplicateResponder = errors.New("duplicate_responder")
	// ErrFenced is matched when a request was not sent because its lease could not cover it.
	ErrFenced = errors.New("request fenced")
	// ErrDeadline is matched when a request was not sent because its pause source's deadline
	// (DeadlineSource) was under a second away: for the caller the lease has as good as ended.
	ErrDeadline = errors.New("under a second before the deadline")
)

// stopError ends the wrapper's loop at once: a retry could only fail the same way.
type stopError struct{ err error }

func stop(err error) error { return stopError{err} }

func (e stopError) Error() string { return e.err.Error() }

func (e stopError) Unwrap() error { return e.err }

// pausedError carries the seed's exact message while matching ErrPaused.
type pausedError struct{ action string }

func (e pausedError) Error() string {
	return fmt.Sprintf("provisioning is paused, cannot perform %s", e.action)
}

func (e pausedError) Is(target error) bool { return target == ErrPaused }

// ResponseCountError reports how many replies arrived for a call that expects exactly one.
type ResponseCountError struct {
	What     string
	Count    int
	Identity string
}

// Error names the action, the reply count and the identity, in choria-provisioner's words.
func (e *ResponseCountError) Error() string {
	return fmt.Sprintf("could not %s: received %d responses while expecting a response from %s", e.What, e.Count, e.Identity)
}

// Is lets errors.Is match ErrResponseCount.
func (e *ResponseCountError) Is(target error) bool { return target == ErrResponseCount }

// InvalidResponseError is a reply whose status is not OK.
type InvalidResponseError struct {
	Sender  string
	Message string
	Code    int
}

// Error names the sender, its status message and code, in choria-provisioner's words.
func (e *InvalidResponseError) Error() string {
	return fmt.Sprintf("invalid response from %s: %s (%d)", e.Sender, e.Message, e.Code)
}

// Is lets errors.Is match ErrInvalidResponse, and ErrLocked when the node reported its lock held.
func (e *InvalidResponseError) Is(target error) bool {
	switch target {
	case ErrInvalidResponse:
		return true
	case ErrLocked:
		return e.Message == LockedMessage
	}
	return false
}

// DuplicateResponderError is a second reply to a credential-making action: two machines answer
// to the node's identity, and the key first received may be either one's.
type DuplicateResponderError struct {
	// Action is the action answered twice: jwt, gen25519 or gencsr.
	Action   string
	Identity string
}

// Error names the outcome, the action and the node.
func (e *DuplicateResponderError) Error() string {
	return fmt.Sprintf("duplicate_responder: a second responder answered %s for %s; nothing it returned is used", e.Action, e.Identity)
}

// Is lets errors.Is match ErrDuplicateResponder.
func (e *DuplicateResponderError) Is(target error) bool { return target == ErrDuplicateResponder }
