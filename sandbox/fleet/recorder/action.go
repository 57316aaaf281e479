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
	// Incarnation counts the node's lives in provisioning mode, from 1: it grows each time the
	// node (re)starts in provisioning mode (a restart that stays there, a reprovision, a
	// rebuild, a flap). Zero when the node does not say (real nodes, older logs).
	Incarnation int `json:"incarnation,omitempty"`
}

// actionFields is Action without its methods, so encoding it does not call them again.
type actionFields Action

// MarshalJSON writes the time in UTC with nine fractional digits.
func (a Action) MarshalJSON() ([]byte, error) {
	// The outer Time shadows the embedded one: encoding/json uses the shallower field.
	return json.Marshal(struct {
		Time string `json:"time"`
		actionFields
	}{a.Time.UTC().Format(TimeFormat), actionFields(a)})
}

// UnmarshalJSON accepts any RFC 3339 time, with or without fractional seconds.
func (a *Action) UnmarshalJSON(b []byte) error {
	var out Action
	j := struct {
		Time string `json:"time"`
		*actionFields
	}{actionFields: (*actionFields)(&out)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, j.Time)
	if err != nil {
		return fmt.Errorf("time %q: %w", j.Time, err)
	}
	out.Time = t
	*a = out
	return nil
}
