// SPDX-License-Identifier: Apache-2.0

package main

import "encoding/json"

// request and response carry the keys of helper.Request and helper.Response that this helper
// reads or writes. They are not those types because importing the helper package links
// go-choria, whose package initialisation would triple the cost of every fork in Exec mode; the
// tests decode every answer through the helper package's runners, so the keys cannot drift.
type request struct {
	// ID is the persistent line protocol's request id, echoed unchanged in the answer.
	ID       json.RawMessage `json:"id,omitempty"`
	Identity string          `json:"identity"`
	CSR      *csr            `json:"csr"`
}

type csr struct {
	CSR    string `json:"csr"`
	SSLDir string `json:"ssldir"`
}

type response struct {
	ID            json.RawMessage   `json:"id,omitempty"`
	Defer         bool              `json:"defer,omitempty"`
	Shutdown      bool              `json:"shutdown,omitempty"`
	Msg           string            `json:"msg,omitempty"`
	Certificate   string            `json:"certificate,omitempty"`
	CA            string            `json:"ca,omitempty"`
	SSLDir        string            `json:"ssldir,omitempty"`
	Configuration map[string]string `json:"configuration,omitempty"`
	Upgrade       string            `json:"upgrade,omitempty"`
}

// errorLine fails one request in the persistent line protocol.
type errorLine struct {
	ID    json.RawMessage `json:"id,omitempty"`
	Error string          `json:"error"`
}
