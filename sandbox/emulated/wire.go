// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/choria-io/go-choria/protocol"
)

// Choria protocol version 1 names, as go-choria's x509 security writes them.
const (
	protoTransport     = "choria:transport:1"
	protoSecureRequest = "choria:secure:request:1"
	protoRequest       = "choria:request:1"
	protoSecureReply   = "choria:secure:reply:1"
	protoReply         = "choria:reply:1"
)

// wireTransport is the outer envelope on the NATS subject: data holds the secure message.
type wireTransport struct {
	Protocol string         `json:"protocol"`
	Data     []byte         `json:"data"`
	Headers  wireTransportH `json:"headers"`
}

type wireTransportH struct {
	ReplyTo    string          `json:"reply-to,omitempty"`
	Sender     string          `json:"mc_sender,omitempty"`
	SeenBy     [][3]string     `json:"seen-by,omitempty"`
	Federation json.RawMessage `json:"federation,omitempty"`
}

// wireSecureRequest carries the request JSON as text, its RSA signature and the caller's cert.
type wireSecureRequest struct {
	Protocol  string `json:"protocol"`
	Message   string `json:"message"`
	Signature string `json:"signature"`
	PubCert   string `json:"pubcert"`
}

type wireRequest struct {
	Protocol string       `json:"protocol"`
	Message  string       `json:"message"`
	Envelope wireEnvelope `json:"envelope"`
}

type wireEnvelope struct {
	RequestID  string           `json:"requestid"`
	SenderID   string           `json:"senderid"`
	CallerID   string           `json:"callerid"`
	Collective string           `json:"collective"`
	Agent      string           `json:"agent"`
	TTL        int              `json:"ttl"`
	Time       int64            `json:"time"`
	Filter     *protocol.Filter `json:"filter"`
}

type wireReply struct {
	Protocol string            `json:"protocol"`
	Message  string            `json:"message"`
	Envelope wireReplyEnvelope `json:"envelope"`
}

type wireReplyEnvelope struct {
	RequestID string `json:"requestid"`
	SenderID  string `json:"senderid"`
	Agent     string `json:"agent"`
	Time      int64  `json:"time"`
}

type wireSecureReply struct {
	Protocol string `json:"protocol"`
	Message  string `json:"message"`
	Hash     string `json:"hash"`
}

// rpcRequest is the SimpleRPC body of every agent request except discovery.
type rpcRequest struct {
	Agent  string          `json:"agent"`
	Action string          `json:"action"`
	Data   json.RawMessage `json:"data"`
}

// request is one decoded incoming request, shared read-only by every node it reaches.
type request struct {
	ID         string
	Sender     string
	Caller     string
	Collective string
	Agent      string
	TTL        int
	Time       int64
	Filter     *protocol.Filter
	ReplyTo    string
	// Federation is echoed on replies, as go-choria copies it from request to reply.
	Federation json.RawMessage
	// Body is the payload: "ping" for discovery, SimpleRPC JSON otherwise.
	Body []byte
	// Action and Data are parsed from Body for SimpleRPC agents.
	Action string
	Data   json.RawMessage
	// Signed parts, kept for optional caller verification.
	Signed    string
	Signature string
	PubCert   string
}

// decodeRequest unwraps transport -> secure request -> request -> payload.
func decodeRequest(raw []byte) (*request, error) {
	var t wireTransport
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("decode transport: %w", err)
	}
	if t.Protocol != protoTransport {
		return nil, fmt.Errorf("unsupported transport protocol %q", t.Protocol)
	}
	var sr wireSecureRequest
	if err := json.Unmarshal(t.Data, &sr); err != nil {
		return nil, fmt.Errorf("decode secure request: %w", err)
	}
	if sr.Protocol != protoSecureRequest {
		return nil, fmt.Errorf("unsupported secure request protocol %q", sr.Protocol)
	}
	var r wireRequest
	if err := json.Unmarshal([]byte(sr.Message), &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	if r.Protocol != protoRequest {
		return nil, fmt.Errorf("unsupported request protocol %q", r.Protocol)
	}
	e := r.Envelope
	if e.RequestID == "" || e.Agent == "" || e.Collective == "" {
		return nil, fmt.Errorf("request envelope lacks requestid, agent or collective")
	}
	if t.Headers.ReplyTo == "" {
		return nil, fmt.Errorf("request %s has no reply-to", e.RequestID)
	}
	req := &request{
		ID: e.RequestID, Sender: e.SenderID, Caller: e.CallerID, Collective: e.Collective,
		Agent: e.Agent, TTL: e.TTL, Time: e.Time, Filter: e.Filter, ReplyTo: t.Headers.ReplyTo,
		Federation: t.Headers.Federation,
		Signed:     sr.Message, Signature: sr.Signature, PubCert: sr.PubCert,
	}
	if req.Filter == nil {
		req.Filter = protocol.NewFilter()
	}
	// Clients base64 the discovery "ping" but send SimpleRPC JSON as is; servers try base64 first.
	req.Body = []byte(r.Message)
	if !strings.HasPrefix(strings.TrimSpace(r.Message), "{") {
		if b, err := base64.StdEncoding.DecodeString(r.Message); err == nil {
			req.Body = b
		}
	}
	if req.Agent != "discovery" {
		var rpc rpcRequest
		if err := json.Unmarshal(req.Body, &rpc); err != nil {
			return nil, fmt.Errorf("request %s: not a SimpleRPC request: %w", req.ID, err)
		}
		req.Action = rpc.Action
		req.Data = rpc.Data
		if len(req.Data) == 0 || string(req.Data) == "null" {
			req.Data = json.RawMessage(`{}`)
		}
	} else {
		req.Action = "ping"
	}
	return req, nil
}

// encodeReply wraps body in reply -> secure reply (sha256 hash) -> transport for identity.
func encodeReply(req *request, identity string, body []byte, now int64) ([]byte, error) {
	rep, err := json.Marshal(wireReply{
		Protocol: protoReply,
		Message:  string(body),
		Envelope: wireReplyEnvelope{RequestID: req.ID, SenderID: identity, Agent: req.Agent, Time: now},
	})
	if err != nil {
		return nil, fmt.Errorf("encode reply: %w", err)
	}
	sum := sha256.Sum256(rep)
	sec, err := json.Marshal(wireSecureReply{
		Protocol: protoSecureReply,
		Message:  string(rep),
		Hash:     base64.StdEncoding.EncodeToString(sum[:]),
	})
	if err != nil {
		return nil, fmt.Errorf("encode secure reply: %w", err)
	}
	out, err := json.Marshal(wireTransport{
		Protocol: protoTransport,
		Data:     sec,
		Headers:  wireTransportH{Sender: identity, Federation: req.Federation},
	})
	if err != nil {
		return nil, fmt.Errorf("encode reply transport: %w", err)
	}
	return out, nil
}
