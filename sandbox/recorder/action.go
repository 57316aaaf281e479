// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"encoding/json"
	"fmt"
	"time"
)

// TimeFormat is RFC 3339 with all nine fractional digits, so lines sort and compare as text.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Action is one RPC action a sandbox node received, real or emulated.
type Action struct {
	// Time is when the node finished handling the action.
	Time time.Time `json:"time"`
	// Region is the lab region of the node's broker.
	Region string `json:"region"`
	// Node is the identity of the node that received the action.
	Node string `json:"node"`
	// Action is agent#action, e.g. choria_provision#configure.
	Action string `json:"action"`
	// Caller is the request's caller id as Choria reports it, e.g. choria=edge-eu-1.mcollective.
	Caller string `json:"caller"`
	// OK is true when the node replied with status OK.
	OK bool `json:"ok"`
	// Error is the node's status message when OK is false.
	Error string `json:"error,omitempty"`
}

// actionJSON mirrors Action with the time as text so the nanoseconds are always written.
type actionJSON struct {
	Time   string `json:"time"`
	Region string `json:"region"`
	Node   string `json:"node"`
	Action string `json:"action"`
	Caller string `json:"caller"`
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
}

// MarshalJSON writes the time in UTC with nine fractional digits.
func (a Action) MarshalJSON() ([]byte, error) {
	return json.Marshal(actionJSON{
		Time:   a.Time.UTC().Format(TimeFormat),
		Region: a.Region,
		Node:   a.Node,
		Action: a.Action,
		Caller: a.Caller,
		OK:     a.OK,
		Error:  a.Error,
	})
}

// UnmarshalJSON accepts any RFC 3339 time, with or without fractional seconds.
func (a *Action) UnmarshalJSON(b []byte) error {
	var j actionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, j.Time)
	if err != nil {
		return fmt.Errorf("time %q: %w", j.Time, err)
	}
	*a = Action{Time: t, Region: j.Region, Node: j.Node, Action: j.Action, Caller: j.Caller, OK: j.OK, Error: j.Error}
	return nil
}
