// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The scanner of jsonscan.go must read every layer exactly as encoding/json does and leave
// everything else to it. These tests hold decodeV1Reply to decodeV1ReplyStd, the decoder that
// used encoding/json for every layer, over replies captured from the sandbox's real go-choria
// servers and emulated nodes (testdata/replies; the JWTs in them are replaced by a dummy and
// their hashes made again) and over whatever the fuzzer makes of them.

// decodeV1ReplyStd is decodeV1Reply as it was with encoding/json at every layer: the reference.
func decodeV1ReplyStd(data []byte, requestID string) (Reply, error) {
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
	var hash [44]byte
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

// capturedReply is one reply of testdata/replies with its layers as encoding/json reads them.
type capturedReply struct {
	name                       string
	transport, secure, message []byte
	body                       []byte
	requestID                  string
}

func capturedReplies(t testing.TB) []capturedReply {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "replies", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured replies in testdata/replies: %v", err)
	}
	var out []capturedReply
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tr v1Transport
		var s v1SecureReply
		var r v1Reply
		if err := json.Unmarshal(data, &tr); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := json.Unmarshal(tr.Data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := json.Unmarshal([]byte(s.Message), &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, capturedReply{name: filepath.Base(f), transport: data, secure: tr.Data, message: []byte(s.Message), body: []byte(r.Message), requestID: r.Envelope.RequestID})
	}
	return out
}

// sameDecode fails t unless the scanning decoder and the reference agree on data: the same
// reply, or errors with the same text.
func sameDecode(t *testing.T, data []byte, id string) {
	t.Helper()
	got, gotErr := decodeV1Reply(data, id)
	want, wantErr := decodeV1ReplyStd(data, id)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("error %v, encoding/json's %v\ninput %q", gotErr, wantErr, data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("reply %+v, encoding/json's %+v\ninput %q", got, want, data)
	}
}

func TestDecodeV1Reply_CapturedRepliesDecodeAsWithEncodingJSON(t *testing.T) {
	for _, c := range capturedReplies(t) {
		r, err := decodeV1Reply(c.transport, c.requestID)
		if err != nil || r.Sender == "" || len(r.Data) == 0 {
			t.Fatalf("%s: %+v %v", c.name, r, err)
		}
		sameDecode(t, c.transport, c.requestID)
		sameDecode(t, c.transport, "fedcba9876543210fedcba9876543210")
	}
}

// The fast path must be the path: a scanner that gave up on every real reply would pass every
// differential test and save nothing.
func TestDecodeV1Reply_ScannerReadsEveryLayerOfCapturedReplies(t *testing.T) {
	for _, c := range capturedReplies(t) {
		tr, ok := scanTransport(c.transport)
		if !ok || !bytes.Equal(tr.data, c.secure) {
			t.Errorf("%s: transport not read by the scanner (%v)", c.name, ok)
		}
		s, ok := scanSecureReply(c.secure)
		if !ok || !bytes.Equal(s.message, c.message) {
			t.Errorf("%s: secure reply not read by the scanner (%v)", c.name, ok)
		}
		r, ok := scanReply(c.message)
		if !ok || string(r.requestID) != c.requestID || !bytes.Equal(r.message, c.body) {
			t.Errorf("%s: reply not read by the scanner (%v)", c.name, ok)
		}
		if _, ok := scanRPCReply(c.body); !ok {
			t.Errorf("%s: SimpleRPC reply not read by the scanner", c.name)
		}
	}
}

// layerInputs are inputs on which the scanner must defer to encoding/json or agree with it:
// letter case and repeats of names, nulls and other types, escapes, surrogates, invalid UTF-8,
// number forms, nesting, and JSON that is not valid.
func layerInputs() []string {
	return []string{
		`{}`, ` {"protocol":"p"} `, "\t{\n\"protocol\"\r:\"p\" }\n", `[]`, `null`, `"s"`, `1`, ``, ` `,
		`{"Protocol":"x"}`, `{"PROTOCOL":"x","protocol":"y"}`, `{"protocol":"a","protocol":"b"}`,
		`{"protocol":null}`, `{"protocol":5}`, `{"protocol":true}`, `{"protocol":{}}`,
		`{"pr\u006ftocol":"x"}`, `{"ſtatuscode":3}`, `{"statusmſg":"x"}`, `{"\u212a":1}`,
		`{"data":"YQ=="}`, `{"data":"YQ\n=="}`, `{"data":"YQ\\n=="}`, `{"data":"YQ"}`, `{"data":"!!"}`,
		`{"data":""}`, `{"data":null}`, `{"data":5}`, `{"data":"Y\u0051=="}`, `{"data":"YQ\/="}`,
		`{"message":"\ud800"}`, `{"message":"\udc00x"}`, `{"message":"\ud83d\ude00"}`,
		`{"message":"\ud83d\u0041"}`, `{"message":"\ud83d\\u0041"}`, `{"message":"\ud83d"}`,
		`{"message":"\u00e9\u2028\u003c\u003e\u0026 é"}`, "{\"message\":\"\xff\"}", "{\"message\":\"\xed\xa0\x80\"}",
		"{\"other\":\"\xff\",\"message\":\"m\"}", "{\"message\":\"a\x01b\"}", `{"message":"\q"}`,
		`{"message":"\u12"}`, `{"message":"\u12g4"}`, `{"message":"\"\\\/\b\f\n\r\t"}`, `{"message":"abc`,
		`{"statuscode":0}`, `{"statuscode":-0}`, `{"statuscode":-12}`, `{"statuscode":1e2}`, `{"statuscode":1.0}`,
		`{"statuscode":9223372036854775807}`, `{"statuscode":9223372036854775808}`, `{"statuscode":"0"}`,
		`{"statuscode":null}`, `{"statuscode":01}`, `{"statuscode":-}`, `{"statuscode":1.}`, `{"statuscode":1e}`,
		`{"statuscode":0,"statusmsg":"OK","data":null}`, `{"data":{"a":[1,2,{"b":null}]}}`, `{"data": 5 }`,
		`{"data":[]}`, `{"data":tru}`, `{"data":nul}`, `{"data":falsey}`,
		`{"envelope":null}`, `{"envelope":5}`, `{"envelope":{}}`, `{"envelope":{"agent":1}}`,
		`{"envelope":{"requestid":"a"},"envelope":{"senderid":"b"}}`, `{"protocol":"a","protocol":null}`,
		`{"envelope":{"requestid":"a","RequestID":"b"}}`, `{"envelope":{"requestid":"a","requestid":"b"}}`,
		`{"envelope":{"senderid":"n1","time":1700000000,"x":[{}]}}`, `{"envelope":{"senderid":"n1"}`,
		`{} x`, `{}}`, `{,}`, `{"a":1,}`, `{"a" 1}`, `{"a"x1}`, `{"a",1}`, `{"a":{"b"x1}}`, `{"a":[{"b"x1}]}`, `{"a":1 "b":2}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{a:1}`,
		`{"a":1}{"b":2}`, `{"a":"b"` + strings.Repeat(" ", 20) + `}`,
		// A closing bracket that does not match its opener.
		`{"a":[1}`, `{"a":{"b":1]}`, `{"a":[1,2}]}`, `{"a":[}`, `{"a":{]}`, `{"a":[1]]}`, `{"a":[{"b":1]}]}`, `{"a":1]`, `[1}`,
		`{"x":` + strings.Repeat("[", maxScanDepth+2) + strings.Repeat("]", maxScanDepth+2) + `}`,
		`{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
		`{"x":` + strings.Repeat(`{"y":`, maxScanDepth-2) + `1` + strings.Repeat("}", maxScanDepth-2) + `}`,
	}
}

// sameLayers fails t unless each layer's reader and scanner agree with encoding/json on data.
func sameLayers(t *testing.T, data []byte) {
	t.Helper()
	valid := json.Valid(data)
	check := func(layer string, scanned bool, err, stdErr error, got, want any) {
		t.Helper()
		if scanned && !valid {
			t.Fatalf("%s: scanner read invalid JSON %q", layer, data)
		}
		if fmt.Sprint(err) != fmt.Sprint(stdErr) {
			t.Fatalf("%s: error %v, encoding/json's %v\ninput %q", layer, err, stdErr, data)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read %+v, encoding/json read %+v\ninput %q", layer, got, want, data)
		}
	}
	str := func(b []byte) string { return string(b) }

	var tr v1Transport
	stdErr := json.Unmarshal(data, &tr)
	_, scanned := scanTransport(data)
	f, err := readTransport(data)
	check("transport", scanned, err, stdErr, [2]string{str(f.protocol), str(f.data)}, [2]string{tr.Protocol, str(tr.Data)})

	var s v1SecureReply
	stdErr = json.Unmarshal(data, &s)
	_, scanned = scanSecureReply(data)
	sf, err := readSecureReply(data)
	check("secure reply", scanned, err, stdErr, v1SecureReply{str(sf.protocol), str(sf.message), str(sf.hash)}, s)

	var r v1Reply
	stdErr = json.Unmarshal(data, &r)
	_, scanned = scanReply(data)
	rf, err := readReply(data)
	got := v1Reply{Protocol: str(rf.protocol), Message: str(rf.message)}
	got.Envelope.RequestID, got.Envelope.SenderID, got.Envelope.Agent = str(rf.requestID), str(rf.senderID), r.Envelope.Agent
	check("reply", scanned, err, stdErr, got, r)

	var body v1RPCReply
	stdErr = json.Unmarshal(data, &body)
	_, scanned = scanRPCReply(data)
	b, err := readRPCReply(data)
	check("SimpleRPC reply", scanned, err, stdErr, b, body)
}

func TestV1ReplyLayers_ReadAsWithEncodingJSON(t *testing.T) {
	for _, in := range layerInputs() {
		sameLayers(t, []byte(in))
	}
	for _, c := range capturedReplies(t) {
		for _, layer := range [][]byte{c.transport, c.secure, c.message, c.body} {
			sameLayers(t, layer)
		}
	}
}

func TestDecodeV1Reply_DeferredLayersStillDecodeAsWithEncodingJSON(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	// Bodies the scanner leaves to encoding/json, inside layers it reads.
	for _, body := range []string{
		`{"Statuscode":1,"statusmsg":"x","data":{}}`, `{"statuscode":1,"statuscode":2}`,
		`{"statuscode":1.5}`, `{"statusmsg":null,"data":null}`, `{"statusmsg":"\ud800"}`, `not json`, ``,
	} {
		sameDecode(t, goChoriaReply(t, id, "n1", body), id)
	}
	if r, err := decodeV1Reply(goChoriaReply(t, id, "n1", `{"statuscode":1,"statuscode":2}`), id); err != nil || r.Code != 2 {
		t.Fatalf("a repeated statuscode: %+v %v, want encoding/json's last value 2", r, err)
	}
}

// hasSpecialByte must see every quote, backslash, control or non-ASCII byte wherever it is in
// the word, and pass words of ordinary ASCII.
func TestHasSpecialByte_SeesEverySpecialByte(t *testing.T) {
	word := []byte("abcdefgh")
	for pos := range 8 {
		for c := range 256 {
			w := bytes.Clone(word)
			w[pos] = byte(c)
			special := c == '"' || c == '\\' || c < 0x20 || c >= 0x80
			if got := hasSpecialByte(binary.LittleEndian.Uint64(w)); got != special {
				t.Fatalf("byte %#x at %d: special %v, want %v", c, pos, got, special)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		var w [8]byte
		special := false
		for i := range w {
			w[i] = byte(rng.IntN(256))
			special = special || w[i] == '"' || w[i] == '\\' || w[i] < 0x20 || w[i] >= 0x80
		}
		if got := hasSpecialByte(binary.LittleEndian.Uint64(w[:])); got != special {
			t.Fatalf("word %q: special %v, want %v", w, got, special)
		}
	}
}

func FuzzDecodeV1Reply(f *testing.F) {
	for _, c := range capturedReplies(f) {
		f.Add(c.transport, c.requestID)
	}
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		sameDecode(t, data, id)
	})
}

// FuzzDecodeV1ReplyBody wraps fuzzed reply and SimpleRPC bodies in valid outer layers, hash
// included, which mutations of a whole transport seldom keep.
func FuzzDecodeV1ReplyBody(f *testing.F) {
	const id = "0123456789abcdef0123456789abcdef"
	for _, c := range capturedReplies(f) {
		f.Add(string(c.body), "n1")
	}
	for _, in := range layerInputs() {
		f.Add(in, "n1")
	}
	f.Fuzz(func(t *testing.T, body, sender string) {
		sameDecode(t, goChoriaReply(t, id, sender, body), id)
	})
}

func FuzzV1ReplyLayers(f *testing.F) {
	for _, c := range capturedReplies(f) {
		for _, layer := range [][]byte{c.transport, c.secure, c.message, c.body} {
			f.Add(layer)
		}
	}
	for _, in := range layerInputs() {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameLayers(t, data)
	})
}

// BenchmarkV1DecodeReplyCaptured decodes every captured reply once per op, a node's worth of
// actions from a real and an emulated server, with the scanner and with encoding/json alone.
func BenchmarkV1DecodeReplyCaptured(b *testing.B) {
	replies := capturedReplies(b)
	for name, decode := range map[string]func([]byte, string) (Reply, error){"scanner": decodeV1Reply, "encoding-json": decodeV1ReplyStd} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, c := range replies {
					if _, err := decode(c.transport, c.requestID); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
