// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/choria-io/go-choria/protocol"
)

func TestEncodeReply_LayersDecodeAndValidate(t *testing.T) {
	var ascii strings.Builder
	for c := range 128 {
		ascii.WriteByte(byte(c))
	}
	body := `{"statusmsg":"a \"quoted\" \\ line` + "\n\t" + `é ☃ <&>","ctl":"` + ascii.String() + `"}`
	req := &request{ID: "0123456789abcdef0123456789abcdef", Agent: "choria_provision"}
	out := encodeReply(req, "emu-eu-00001", []byte(body), 1700000000)
	mustValid := func(v protocol.ProtocolVersion, data []byte) {
		t.Helper()
		ok, errs, err := protocol.SchemaValidate(v, data)
		if err != nil || !ok {
			t.Fatalf("%s does not validate: %v %v\n%s", v, err, errs, data)
		}
	}
	mustValid(protocol.TransportV1, out)
	var tr wireTransport
	if err := json.Unmarshal(out, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Protocol != protoTransport || tr.Headers.Sender != "emu-eu-00001" {
		t.Fatalf("transport %+v", tr)
	}
	mustValid(protocol.SecureReplyV1, tr.Data)
	var sec wireSecureReply
	if err := json.Unmarshal(tr.Data, &sec); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(sec.Message))
	if sec.Hash != base64.StdEncoding.EncodeToString(sum[:]) {
		t.Fatal("secure reply hash does not cover the decoded reply")
	}
	mustValid(protocol.ReplyV1, []byte(sec.Message))
	var rep wireReply
	if err := json.Unmarshal([]byte(sec.Message), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Message != body || rep.Envelope != (wireReplyEnvelope{RequestID: "0123456789abcdef0123456789abcdef", SenderID: "emu-eu-00001", Agent: "choria_provision", Time: 1700000000}) {
		t.Fatalf("reply %+v", rep)
	}
}

func TestDecodeRequest_RefusesWhatIsNotAChoriaRequest(t *testing.T) {
	cases := map[string]string{
		"not json":       `nope`,
		"wrong protocol": `{"protocol":"io.choria.protocol.v2.transport","data":"e30=","headers":{}}`,
		"no reply-to":    `{"protocol":"choria:transport:1","data":"` + base64.StdEncoding.EncodeToString([]byte(`{"protocol":"choria:secure:request:1","message":"{\"protocol\":\"choria:request:1\",\"message\":\"cGluZw==\",\"envelope\":{\"requestid\":\"r\",\"agent\":\"discovery\",\"collective\":\"provisioning\"}}"}`)) + `","headers":{}}`,
	}
	for name, raw := range cases {
		if _, err := decodeRequest([]byte(raw)); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

// The reply layers as JSON documents, to read back what encodeReply writes.
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

// TestDecodeRequest_RefusesATTLBelowTheSchemaMinimum: go-choria's protocol v1 request schema
// admits no TTL under 30 s, and a server drops a request with one as malformed; the emulator
// must too, or a client sending short TTLs works against it and against no real node.
func TestDecodeRequest_RefusesATTLBelowTheSchemaMinimum(t *testing.T) {
	raw := func(ttl int) (request, transport []byte) {
		request = fmt.Appendf(nil, `{"protocol":"choria:request:1","message":"cGluZw==","envelope":{"requestid":"0123456789abcdef0123456789abcdef","senderid":"edge","callerid":"choria=edge","collective":"provisioning","agent":"discovery","ttl":%d,"time":1700000000,"filter":{"fact":[],"cf_class":[],"agent":[],"identity":[],"compound":[]}}}`, ttl)
		sec, err := json.Marshal(map[string]string{"protocol": "choria:secure:request:1", "message": string(request), "signature": "insecure", "pubcert": "insecure"})
		if err != nil {
			t.Fatal(err)
		}
		return request, []byte(`{"protocol":"choria:transport:1","data":"` + base64.StdEncoding.EncodeToString(sec) + `","headers":{"reply-to":"provisioning.reply.x.r"}}`)
	}
	for _, tc := range []struct {
		ttl   int
		valid bool
	}{{29, false}, {30, true}, {60, true}} {
		request, transport := raw(tc.ttl)
		if ok, _, _ := protocol.SchemaValidate(protocol.RequestV1, request); ok != tc.valid {
			t.Fatalf("ttl %d: go-choria's schema says valid %v, the test expects %v", tc.ttl, ok, tc.valid)
		}
		if _, err := decodeRequest(transport); (err == nil) != tc.valid {
			t.Errorf("ttl %d: decoded with error %v, want valid %v as go-choria's schema", tc.ttl, err, tc.valid)
		}
	}
}
