// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// The three layers of a protocol v1 reply, only the fields a client reads.
type (
	v1Transport struct {
		Protocol string `json:"protocol"`
		Data     []byte `json:"data"` // base64 in the JSON
	}
	v1SecureReply struct {
		Protocol string `json:"protocol"`
		Message  string `json:"message"`
		Hash     string `json:"hash"`
	}
	v1Reply struct {
		Protocol string `json:"protocol"`
		Message  string `json:"message"`
		Envelope struct {
			RequestID string `json:"requestid"`
			SenderID  string `json:"senderid"`
			Agent     string `json:"agent"`
		} `json:"envelope"`
	}
	v1RPCReply struct {
		Statuscode int             `json:"statuscode"`
		Statusmsg  string          `json:"statusmsg"`
		Data       json.RawMessage `json:"data"`
	}
)

// decodeV1Reply unwraps transport -> secure reply -> reply -> SimpleRPC reply and checks what
// go-choria's client relies on: each layer's protocol, the secure reply's sha256 hash of its
// message (its Valid), and, beyond go-choria, that the reply answers request id and has a
// sender. It skips go-choria's JSON schema validation of each layer (the fields read here are
// checked instead) and the transport's seen-by and federation headers, which a direct client
// request does not use. A v1 reply carries no signature: provisioning-mode servers do not sign,
// and the hash only detects corruption, so there is nothing more a client could verify.
func decodeV1Reply(data []byte, requestID string) (Reply, error) {
	var t v1Transport
	if err := json.Unmarshal(data, &t); err != nil {
		return Reply{}, fmt.Errorf("decode reply transport: %w", err)
	}
	if t.Protocol != protoTransport {
		return Reply{}, fmt.Errorf("reply transport protocol %q, want %s", t.Protocol, protoTransport)
	}
	var s v1SecureReply
	if err := json.Unmarshal(t.Data, &s); err != nil {
		return Reply{}, fmt.Errorf("decode secure reply: %w", err)
	}
	if s.Protocol != protoSecureReply {
		return Reply{}, fmt.Errorf("secure reply protocol %q, want %s", s.Protocol, protoSecureReply)
	}
	sum := sha256.Sum256([]byte(s.Message))
	var hash [44]byte // base64 of 32 bytes
	base64.StdEncoding.Encode(hash[:], sum[:])
	if string(hash[:]) != s.Hash {
		return Reply{}, errors.New("secure reply hash does not match its message")
	}
	var r v1Reply
	if err := json.Unmarshal([]byte(s.Message), &r); err != nil {
		return Reply{}, fmt.Errorf("decode reply: %w", err)
	}
	if r.Protocol != protoReply {
		return Reply{}, fmt.Errorf("reply protocol %q, want %s", r.Protocol, protoReply)
	}
	if r.Envelope.RequestID != requestID {
		return Reply{}, fmt.Errorf("reply to request %q, want %q", r.Envelope.RequestID, requestID)
	}
	if r.Envelope.SenderID == "" {
		return Reply{}, errors.New("reply has no sender")
	}
	var body v1RPCReply
	if err := json.Unmarshal([]byte(r.Message), &body); err != nil {
		return Reply{}, fmt.Errorf("decode reply from %s: %w", r.Envelope.SenderID, err)
	}
	return Reply{Sender: r.Envelope.SenderID, Code: body.Statuscode, Message: body.Statusmsg, Data: body.Data}, nil
}
