// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// The layers of a protocol v1 reply as encoding/json reads them, only the fields a client reads.
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
//
// Each layer is read by the scanner of jsonscan.go, or by encoding/json into the types above
// when the scanner is not sure, so the result and every error are encoding/json's.
func decodeV1Reply(data []byte, requestID string) (Reply, error) {
	t, err := readTransport(data)
	if err != nil {
		return Reply{}, fmt.Errorf("decode reply transport: %w", err)
	}
	if string(t.protocol) != protoTransport {
		return Reply{}, fmt.Errorf("reply transport protocol %q, want %s", t.protocol, protoTransport)
	}
	s, err := readSecureReply(t.data)
	if err != nil {
		return Reply{}, fmt.Errorf("decode secure reply: %w", err)
	}
	if string(s.protocol) != protoSecureReply {
		return Reply{}, fmt.Errorf("secure reply protocol %q, want %s", s.protocol, protoSecureReply)
	}
	sum := sha256.Sum256(s.message)
	var hash [44]byte // base64 of 32 bytes
	base64.StdEncoding.Encode(hash[:], sum[:])
	if string(hash[:]) != string(s.hash) {
		return Reply{}, errors.New("secure reply hash does not match its message")
	}
	r, err := readReply(s.message)
	if err != nil {
		return Reply{}, fmt.Errorf("decode reply: %w", err)
	}
	if string(r.protocol) != protoReply {
		return Reply{}, fmt.Errorf("reply protocol %q, want %s", r.protocol, protoReply)
	}
	if string(r.requestID) != requestID {
		return Reply{}, fmt.Errorf("reply to request %q, want %q", r.requestID, requestID)
	}
	if len(r.senderID) == 0 {
		return Reply{}, errors.New("reply has no sender")
	}
	sender := string(r.senderID)
	body, err := readRPCReply(r.message)
	if err != nil {
		return Reply{}, fmt.Errorf("decode reply from %s: %w", sender, err)
	}
	return Reply{Sender: sender, Code: body.Statuscode, Message: body.Statusmsg, Data: body.Data}, nil
}

// What the client reads of the transport, secure reply and reply layers, as bytes: the next
// layer is read from them and the hash is taken over them without a copy into a string.
type (
	transportFields struct{ protocol, data []byte }
	secureFields    struct{ protocol, message, hash []byte }
	replyFields     struct{ protocol, message, requestID, senderID []byte }
)

// Each layer is read by its scan function, or by encoding/json when the scanner is not sure.

func readTransport(data []byte) (transportFields, error) {
	if f, ok := scanTransport(data); ok {
		return f, nil
	}
	var t v1Transport
	if err := json.Unmarshal(data, &t); err != nil {
		return transportFields{}, err
	}
	return transportFields{protocol: []byte(t.Protocol), data: t.Data}, nil
}

func scanTransport(data []byte) (transportFields, bool) {
	var v [2][]byte
	if !objectFields(data, v[:], "protocol", "data") {
		return transportFields{}, false
	}
	p, ok1 := stringValue(v[0])
	d, ok2 := base64Value(v[1])
	return transportFields{protocol: p, data: d}, ok1 && ok2
}

func readSecureReply(data []byte) (secureFields, error) {
	if f, ok := scanSecureReply(data); ok {
		return f, nil
	}
	var s v1SecureReply
	if err := json.Unmarshal(data, &s); err != nil {
		return secureFields{}, err
	}
	return secureFields{protocol: []byte(s.Protocol), message: []byte(s.Message), hash: []byte(s.Hash)}, nil
}

func scanSecureReply(data []byte) (secureFields, bool) {
	var v [3][]byte
	if !objectFields(data, v[:], "protocol", "message", "hash") {
		return secureFields{}, false
	}
	p, ok1 := stringValue(v[0])
	m, ok2 := stringValue(v[1])
	h, ok3 := stringValue(v[2])
	return secureFields{protocol: p, message: m, hash: h}, ok1 && ok2 && ok3
}

func readReply(data []byte) (replyFields, error) {
	if f, ok := scanReply(data); ok {
		return f, nil
	}
	var r v1Reply
	if err := json.Unmarshal(data, &r); err != nil {
		return replyFields{}, err
	}
	return replyFields{protocol: []byte(r.Protocol), message: []byte(r.Message), requestID: []byte(r.Envelope.RequestID), senderID: []byte(r.Envelope.SenderID)}, nil
}

func scanReply(data []byte) (replyFields, bool) {
	var v [3][]byte
	if !objectFields(data, v[:], "protocol", "message", "envelope") {
		return replyFields{}, false
	}
	p, ok1 := stringValue(v[0])
	m, ok2 := stringValue(v[1])
	if !ok1 || !ok2 {
		return replyFields{}, false
	}
	f := replyFields{protocol: p, message: m}
	if v[2] == nil {
		return f, true
	}
	var e [3][]byte
	// agent is read though unused: encoding/json refuses an agent that is not a string.
	if !objectFields(v[2], e[:], "requestid", "senderid", "agent") {
		return replyFields{}, false
	}
	id, ok1 := stringValue(e[0])
	sender, ok2 := stringValue(e[1])
	_, ok3 := stringValue(e[2])
	f.requestID, f.senderID = id, sender
	return f, ok1 && ok2 && ok3
}

// readRPCReply keeps the action's data as the raw bytes of the reply for the action's own decode.
func readRPCReply(data []byte) (v1RPCReply, error) {
	if body, ok := scanRPCReply(data); ok {
		return body, nil
	}
	var body v1RPCReply
	if err := json.Unmarshal(data, &body); err != nil {
		return v1RPCReply{}, err
	}
	return body, nil
}

func scanRPCReply(data []byte) (v1RPCReply, bool) {
	var v [3][]byte
	if !objectFields(data, v[:], "statuscode", "statusmsg", "data") {
		return v1RPCReply{}, false
	}
	code, ok1 := intValue(v[0])
	msg, ok2 := stringValue(v[1])
	if !ok1 || !ok2 {
		return v1RPCReply{}, false
	}
	// The data is not copied: it lies in memory this decode allocated (the base64 output or an
	// unescaped message), never in the caller's message.
	return v1RPCReply{Statuscode: code, Statusmsg: string(msg), Data: v[2]}, true
}
