// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Choria protocol version 1 names (go-choria v0.30.0 protocol/protocol.go).
const (
	protoTransport     = "choria:transport:1"
	protoSecureRequest = "choria:secure:request:1"
	protoRequest       = "choria:request:1"
	protoSecureReply   = "choria:secure:reply:1"
	protoReply         = "choria:reply:1"
	insecure           = "insecure"
)

// v1Encoder writes a protocol v1 request as go-choria's message, protocol/v1 and connector
// packages do: SimpleRPC body -> request (envelope and filter) -> secure request (signature and
// certificate, or "insecure" for both, as go-choria writes them when protocol.Secure is false)
// -> transport with reply-to and mc_sender headers. Field order and names are go-choria's; the
// JSON is written by hand because go-choria's path validates each layer against its JSON
// schema, which it compiles again for every message.
type v1Encoder struct {
	senderID   string // the client's configured identity (envelope senderid, mc_sender)
	callerID   string // choria=<certname>
	collective string
	signer     *requestSigner // nil: no key, every request is unsigned
}

// v1Request is one encoded request: the NATS subject, the transport bytes and its id.
type v1Request struct {
	id      string
	subject string
	data    []byte
}

// newRequestID is a 32 character hex id, the shape of go-choria's v1 request ids.
func newRequestID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("request id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// encode builds req as a direct request to req.Identity whose replies go to replyTo, created at
// now and valid for ttl seconds from then.
func (e *v1Encoder) encode(id string, req Request, replyTo string, sign bool, now time.Time, ttl int) (v1Request, error) {
	data := req.Data
	if len(data) == 0 {
		data = []byte("{}")
	}
	// A signature covers the request's bytes; a decoder that replaced invalid UTF-8 would
	// verify other bytes than were signed.
	if !utf8.Valid(data) {
		return v1Request{}, fmt.Errorf("%s to %s: request data is not valid UTF-8", req.Label(), req.Identity)
	}
	if sign && e.signer == nil {
		return v1Request{}, fmt.Errorf("%s to %s: signing requested but the connection has no RSA key", req.Label(), req.Identity)
	}

	// SimpleRPC body, as mcorpc's RPCRequest marshals.
	body := make([]byte, 0, len(data)+len(req.Agent)+len(req.Action)+40)
	body = append(body, `{"agent":`...)
	body = appendJSONString(body, req.Agent)
	body = append(body, `,"action":`...)
	body = appendJSONString(body, req.Action)
	body = append(body, `,"data":`...)
	body = append(body, data...)
	body = append(body, '}')

	r := make([]byte, 0, len(body)+len(body)/8+len(e.senderID)+len(e.callerID)+len(req.Agent)+260)
	r = append(r, `{"protocol":"`+protoRequest+`","message":`...)
	r = appendJSONString(r, string(body))
	r = append(r, `,"envelope":{"requestid":"`...)
	r = append(r, id...)
	r = append(r, `","senderid":`...)
	r = appendJSONString(r, e.senderID)
	r = append(r, `,"callerid":`...)
	r = appendJSONString(r, e.callerID)
	r = append(r, `,"collective":`...)
	r = appendJSONString(r, e.collective)
	r = append(r, `,"agent":`...)
	r = appendJSONString(r, req.Agent)
	r = append(r, `,"ttl":`...)
	r = strconv.AppendInt(r, int64(ttl), 10)
	r = append(r, `,"time":`...)
	r = strconv.AppendInt(r, now.Unix(), 10)
	// go-choria's filter for a direct request: the agent, nothing else; the target is the subject.
	r = append(r, `,"filter":{"fact":[],"cf_class":[],"agent":[`...)
	r = appendJSONString(r, req.Agent)
	r = append(r, `],"identity":[],"compound":[]}}}`...)

	sig, pubcert := insecure, insecure
	if sign {
		s, err := e.signer.sign(r)
		if err != nil {
			return v1Request{}, fmt.Errorf("%s to %s: sign request: %w", req.Label(), req.Identity, err)
		}
		sig, pubcert = base64.StdEncoding.EncodeToString(s), e.signer.pubcert
	}

	sec := make([]byte, 0, len(r)+len(r)/8+len(sig)+len(pubcert)+len(pubcert)/16+96)
	sec = append(sec, `{"protocol":"`+protoSecureRequest+`","message":`...)
	sec = appendJSONString(sec, string(r))
	sec = append(sec, `,"signature":`...)
	sec = appendJSONString(sec, sig)
	sec = append(sec, `,"pubcert":`...)
	sec = appendJSONString(sec, pubcert)
	sec = append(sec, '}')

	t := make([]byte, 0, base64.StdEncoding.EncodedLen(len(sec))+len(replyTo)+len(e.senderID)+96)
	t = append(t, `{"protocol":"`+protoTransport+`","data":"`...)
	t = base64.StdEncoding.AppendEncode(t, sec)
	t = append(t, `","headers":{"reply-to":`...)
	t = appendJSONString(t, replyTo)
	t = append(t, `,"mc_sender":`...)
	t = appendJSONString(t, e.senderID)
	t = append(t, `}}`...)

	return v1Request{id: id, subject: nodeSubject(e.collective, req.Identity), data: t}, nil
}

// nodeSubject is identity's own subject in collective, go-choria's NodeDirectedTarget.
func nodeSubject(collective, identity string) string { return collective + ".node." + identity }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; s must be valid UTF-8, which is copied as is.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
