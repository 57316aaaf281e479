// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/choria-io/go-choria/protocol"
	"github.com/tidwall/gjson"
)

// Choria protocol version 1 names, as go-choria's x509 security writes them.
const (
	protoTransport     = "choria:transport:1"
	protoSecureRequest = "choria:secure:request:1"
	protoRequest       = "choria:request:1"
	protoSecureReply   = "choria:secure:reply:1"
	protoReply         = "choria:reply:1"
	// minTTL is the least request TTL go-choria's protocol v1 schema admits.
	minTTL = 30
)

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

// decodeRequest unwraps transport -> secure request -> request -> payload. It reads the few
// fields it needs with gjson: encoding/json (validate, then decode three nested documents with
// an escaped PEM certificate inside) cost ~75 µs a request, four fifths of a node's CPU per RPC.
func decodeRequest(raw []byte) (*request, error) {
	tProto, tData, headers := transportFields(raw)
	if tProto != protoTransport {
		return nil, fmt.Errorf("unsupported transport protocol %q", tProto)
	}
	sec, err := decodeSecure(tData)
	if err != nil {
		return nil, err
	}
	msg, envelope, err := decodeSigned(sec.signed)
	if err != nil {
		return nil, err
	}
	req := &request{ReplyTo: headers.Get("reply-to").Str, Signed: sec.signed, Signature: sec.signature, PubCert: sec.pubcert}
	filter := readEnvelope(req, envelope)
	if fed := headers.Get("federation"); fed.Exists() && fed.Type != gjson.Null {
		req.Federation = json.RawMessage(fed.Raw)
	}
	if err := checkEnvelope(req); err != nil {
		return nil, err
	}
	req.Filter = protocol.NewFilter()
	if filter.IsObject() {
		if err := json.Unmarshal([]byte(filter.Raw), req.Filter); err != nil {
			return nil, fmt.Errorf("request %s filter: %w", req.ID, err)
		}
	}
	if err := readBody(req, msg); err != nil {
		return nil, err
	}
	return req, nil
}

// secureRequest is the signed request a transport carries, with its signature and certificate.
type secureRequest struct{ signed, signature, pubcert string }

// decodeSecure reads the secure request out of a transport's base64 data.
func decodeSecure(data string) (secureRequest, error) {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) == 0 {
		return secureRequest{}, fmt.Errorf("decode transport data: %v", err)
	}
	f := members(gjson.ParseBytes(raw), "protocol", "message", "signature", "pubcert")
	if f[0].Str != protoSecureRequest {
		return secureRequest{}, fmt.Errorf("unsupported secure request protocol %q", f[0].Str)
	}
	return secureRequest{signed: f[1].Str, signature: f[2].Str, pubcert: f[3].Str}, nil
}

// decodeSigned reads the request's message and envelope out of the signed request.
func decodeSigned(signed string) (string, gjson.Result, error) {
	f := members(gjson.Parse(signed), "protocol", "message", "envelope")
	if f[0].Str != protoRequest {
		return "", gjson.Result{}, fmt.Errorf("unsupported request protocol %q", f[0].Str)
	}
	return f[1].Str, f[2], nil
}

// members reads the members of the JSON object o named by keys (four at the most) in one pass,
// each to the same index of the answer: a member named twice counts as its last, a missing one
// is the zero Result.
func members(o gjson.Result, keys ...string) (found [4]gjson.Result) {
	o.ForEach(func(k, v gjson.Result) bool {
		if i := slices.Index(keys, k.Str); i >= 0 {
			found[i] = v
		}
		return true
	})
	return found
}

// readEnvelope fills req from the envelope and returns its filter, still encoded.
func readEnvelope(req *request, e gjson.Result) (filter gjson.Result) {
	e.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "requestid":
			req.ID = v.Str
		case "senderid":
			req.Sender = v.Str
		case "callerid":
			req.Caller = v.Str
		case "collective":
			req.Collective = v.Str
		case "agent":
			req.Agent = v.Str
		case "ttl":
			req.TTL = int(v.Int())
		case "time":
			req.Time = v.Int()
		case "filter":
			filter = v
		}
		return true
	})
	return filter
}

// checkEnvelope refuses what a go-choria server drops as malformed.
func checkEnvelope(req *request) error {
	if req.ID == "" || req.Agent == "" || req.Collective == "" {
		return fmt.Errorf("request envelope lacks requestid, agent or collective")
	}
	if req.ReplyTo == "" {
		return fmt.Errorf("request %s has no reply-to", req.ID)
	}
	if req.TTL < minTTL {
		// go-choria's request schema ("minimum": 30): a server drops the request as malformed.
		return fmt.Errorf("request %s: ttl %d is below protocol v1's minimum of %d", req.ID, req.TTL, minTTL)
	}
	return nil
}

// readBody sets the request's body, action and data from its message.
func readBody(req *request, msg string) error {
	// Clients base64 the discovery "ping" but send SimpleRPC JSON as is; servers try base64 first.
	req.Body = []byte(msg)
	if !strings.HasPrefix(strings.TrimSpace(msg), "{") {
		if b, err := base64.StdEncoding.DecodeString(msg); err == nil {
			req.Body = b
		}
	}
	if req.Agent == "discovery" {
		req.Action = "ping"
		return nil
	}
	if !gjson.ValidBytes(req.Body) {
		return fmt.Errorf("request %s: not a SimpleRPC request: invalid JSON", req.ID)
	}
	rpc := gjson.GetManyBytes(req.Body, "action", "data")
	req.Action = rpc[0].Str
	req.Data = json.RawMessage(`{}`)
	if rpc[1].Exists() && rpc[1].Type != gjson.Null {
		req.Data = json.RawMessage(rpc[1].Raw)
	}
	return nil
}

// transportFields reads protocol, data and headers of a transport. go-choria writes them in
// that order and data is base64 (no quote or backslash can occur in it), so the fast path finds
// data's end with one IndexByte instead of scanning its ~4 KB a byte at a time; anything
// unexpected takes the general path.
func transportFields(raw []byte) (proto, data string, headers gjson.Result) {
	if proto, data, headers, ok := transportFieldsFast(raw); ok {
		return proto, data, headers
	}
	f := members(gjson.ParseBytes(raw), "protocol", "data", "headers")
	return f[0].Str, f[1].Str, f[2]
}

func transportFieldsFast(raw []byte) (proto, data string, headers gjson.Result, ok bool) {
	const dataKey, headersKey = `"data":"`, `"headers":`
	i := bytes.Index(raw, []byte(dataKey))
	if i < 0 {
		return "", "", headers, false
	}
	rest := raw[i+len(dataKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return "", "", headers, false
	}
	tail := rest[j+1:]
	k := bytes.Index(tail, []byte(headersKey))
	if k < 0 {
		return "", "", headers, false
	}
	// protocol precedes data in what go-choria writes; the prefix is enough to find it.
	proto = gjson.GetBytes(raw[:i], "protocol").Str
	if proto == "" {
		return "", "", headers, false
	}
	return proto, string(rest[:j]), gjson.ParseBytes(tail[k+len(headersKey):]), true
}

// encodeReply wraps body in reply -> secure reply (sha256 hash) -> transport for identity.
// It writes the JSON by hand: three nested json.Marshal calls were most of a discovery
// reply's cost, and a 10,000-node broadcast makes 10,000 of them.
func encodeReply(req *request, identity string, body []byte, now int64) []byte {
	rep := make([]byte, 0, len(body)+len(body)/8+256)
	rep = append(rep, `{"protocol":"`+protoReply+`","message":`...)
	rep = appendJSONString(rep, body)
	rep = append(rep, `,"envelope":{"requestid":`...)
	rep = appendJSONString(rep, []byte(req.ID))
	rep = append(rep, `,"senderid":`...)
	rep = appendJSONString(rep, []byte(identity))
	rep = append(rep, `,"agent":`...)
	rep = appendJSONString(rep, []byte(req.Agent))
	rep = append(rep, `,"time":`...)
	rep = strconv.AppendInt(rep, now, 10)
	rep = append(rep, "}}"...)

	sum := sha256.Sum256(rep)
	sec := make([]byte, 0, len(rep)+len(rep)/4+128)
	sec = append(sec, `{"protocol":"`+protoSecureReply+`","message":`...)
	sec = appendJSONString(sec, rep)
	sec = append(sec, `,"hash":"`...)
	sec = base64.StdEncoding.AppendEncode(sec, sum[:])
	sec = append(sec, `"}`...)

	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(sec))+len(identity)+len(req.Federation)+96)
	out = append(out, `{"protocol":"`+protoTransport+`","data":"`...)
	out = base64.StdEncoding.AppendEncode(out, sec)
	out = append(out, `","headers":{"mc_sender":`...)
	out = appendJSONString(out, []byte(identity))
	if len(req.Federation) > 0 {
		out = append(out, `,"federation":`...)
		out = append(out, req.Federation...)
	}
	return append(out, "}}"...)
}

// appendJSONString appends s as a JSON string. Decoding it yields s exactly (for valid UTF-8,
// which every body here is), and that is what matters: the hash covers the decoded bytes.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
