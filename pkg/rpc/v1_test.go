// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/go-choria/protocol"
	v1 "github.com/choria-io/go-choria/protocol/v1"

	"github.com/seed96588659/muster/pkg/testkit"
)

// testSigner is a self-signed RSA-2048 caller, as a TLS certificate the way go-choria loads it.
func testSigner(t testing.TB) (*requestSigner, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	cert := testkit.SelfSigned(t, key, "edge.mcollective")
	s, err := newRequestSigner(staticTLS{&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key}}}})
	if err != nil {
		t.Fatal(err)
	}
	return s, cert
}

type staticTLS struct{ c *tls.Config }

func (s staticTLS) ClientTLSConfig() (*tls.Config, error) { return s.c, nil }

// schemaValid fails t unless data is valid under go-choria's JSON schema of version.
func schemaValid(t *testing.T, version protocol.ProtocolVersion, data []byte) {
	t.Helper()
	ok, errs, err := protocol.SchemaValidate(version, data)
	if err != nil || !ok {
		t.Fatalf("%s: not valid under go-choria's schema: %v %v\n%s", version, errs, err, data)
	}
}

func TestV1Encoder_WritesWhatGoChoriaParsesAndVerifies(t *testing.T) {
	signer, cert := testSigner(t)
	enc := &v1Encoder{senderID: "edge.mcollective", callerID: "choria=edge.mcollective", collective: "provisioning", signer: signer}
	now := time.Unix(1700000000, 0)
	data := json.RawMessage(`{"token":"t\"<&>\u2028","config":"{\"a\":\"b\\n\"}"}`)

	for _, sign := range []bool{true, false} {
		req := Request{Agent: "choria_provision", Action: "configure", Identity: "n1.example.net", Data: data}
		out, err := enc.encode("0123456789abcdef0123456789abcdef", req, "provisioning.reply.x.0123456789abcdef0123456789abcdef", sign, now, 60)
		if err != nil {
			t.Fatal(err)
		}
		if out.subject != "provisioning.node.n1.example.net" {
			t.Fatalf("subject %q", out.subject)
		}

		schemaValid(t, protocol.TransportV1, out.data)
		var tr v1.TransportMessage
		if err := json.Unmarshal(out.data, &tr); err != nil {
			t.Fatal(err)
		}
		if tr.Protocol != protocol.TransportV1 || tr.Headers.ReplyTo != "provisioning.reply.x.0123456789abcdef0123456789abcdef" || tr.Headers.MCollectiveSender != "edge.mcollective" {
			t.Fatalf("transport %s %+v", tr.Protocol, tr.Headers)
		}

		schemaValid(t, protocol.SecureRequestV1, tr.Data)
		var sr v1.SecureRequest
		if err := json.Unmarshal(tr.Data, &sr); err != nil {
			t.Fatal(err)
		}
		if sign {
			sig, err := base64.StdEncoding.DecodeString(sr.Signature)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(sr.MessageBody))
			if err := rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), crypto.SHA256, sum[:], sig); err != nil {
				t.Fatalf("signature does not verify over the request: %v", err)
			}
			block, _ := pem.Decode([]byte(sr.PublicCertificate))
			if block == nil || string(block.Bytes) != string(cert.Raw) {
				t.Fatalf("pubcert is not the caller's certificate: %q", sr.PublicCertificate)
			}
		} else if sr.Signature != "insecure" || sr.PublicCertificate != "insecure" {
			t.Fatalf("unsigned request carries signature %q pubcert %q", sr.Signature, sr.PublicCertificate)
		}

		schemaValid(t, protocol.RequestV1, []byte(sr.MessageBody))
		r := &v1.Request{Envelope: &v1.RequestEnvelope{}}
		if err := json.Unmarshal([]byte(sr.MessageBody), r); err != nil {
			t.Fatal(err)
		}
		f, _ := r.Filter()
		if r.Version() != protocol.RequestV1 || r.RequestID() != "0123456789abcdef0123456789abcdef" || r.SenderID() != "edge.mcollective" ||
			r.CallerID() != "choria=edge.mcollective" || r.Collective() != "provisioning" || r.Agent() != "choria_provision" ||
			r.TTL() != 60 || !r.Time().Equal(now) || len(f.Agent) != 1 || f.Agent[0] != "choria_provision" {
			t.Fatalf("request %s", sr.MessageBody)
		}
		var body struct {
			Agent, Action string
			Data          json.RawMessage
		}
		if err := json.Unmarshal(r.Message(), &body); err != nil {
			t.Fatal(err)
		}
		if body.Agent != "choria_provision" || body.Action != "configure" || string(body.Data) != string(data) {
			t.Fatalf("body %s", r.Message())
		}
	}
}

func TestV1Encoder_RefusesWhatItCannotSendFaithfully(t *testing.T) {
	enc := &v1Encoder{senderID: "e", callerID: "choria=e", collective: "provisioning"}
	req := Request{Agent: "rpcutil", Action: "inventory", Identity: "n1", Data: json.RawMessage("{\"a\":\"\xff\"}")}
	if _, err := enc.encode("0123456789abcdef0123456789abcdef", req, "r", false, time.Now(), 60); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	req.Data = json.RawMessage(`{}`)
	if _, err := enc.encode("0123456789abcdef0123456789abcdef", req, "r", true, time.Now(), 60); err == nil || !strings.Contains(err.Error(), "no RSA key") {
		t.Fatalf("signing without a key: %v", err)
	}
}

func TestSigning_WhichRequestsAreSigned(t *testing.T) {
	for _, c := range []struct {
		mode     Signing
		unsigned bool
		want     bool
	}{
		{SignAuto, false, true}, {SignAuto, true, false},
		{SignAlways, false, true}, {SignAlways, true, true},
		{SignNever, false, false}, {SignNever, true, false},
	} {
		if got := c.mode.signs(c.unsigned); got != c.want {
			t.Errorf("%s with Unsigned %v: signs %v, want %v", c.mode, c.unsigned, got, c.want)
		}
	}
}

// goChoriaReply builds a reply as a provisioning-mode server publishes it, with go-choria's types.
func goChoriaReply(t testing.TB, requestID, sender, body string) []byte {
	t.Helper()
	rep, err := json.Marshal(&v1.Reply{Protocol: protocol.ReplyV1, MessageBody: body, Envelope: &v1.ReplyEnvelope{RequestID: requestID, SenderID: sender, Agent: "rpcutil", Time: 1700000000}})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(rep)
	sec, err := json.Marshal(&v1.SecureReply{Protocol: protocol.SecureReplyV1, MessageBody: string(rep), Hash: base64.StdEncoding.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := json.Marshal(&v1.TransportMessage{Protocol: protocol.TransportV1, Data: sec, Headers: &v1.TransportHeaders{MCollectiveSender: sender}})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestDecodeV1Reply_ReadsGoChoriaRepliesAndRefusesBadOnes(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	good := goChoriaReply(t, id, "n1", `{"statuscode":1,"statusmsg":"nope","data":{"version":"0.29.4"}}`)
	r, err := decodeV1Reply(good, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sender != "n1" || r.Code != 1 || r.Message != "nope" || string(r.Data) != `{"version":"0.29.4"}` {
		t.Fatalf("%+v", r)
	}

	// A secure reply whose message changed after its hash was made.
	var tr v1.TransportMessage
	var sec v1.SecureReply
	if err := json.Unmarshal(good, &tr); err != nil || json.Unmarshal(tr.Data, &sec) != nil {
		t.Fatal(err)
	}
	sec.MessageBody = strings.Replace(sec.MessageBody, "nope", "fine", 1)
	tr.Data, _ = json.Marshal(&sec)
	tampered, _ := json.Marshal(&tr)

	for _, c := range []struct {
		name string
		data []byte
		id   string
		want string
	}{
		{"other request", good, "fedcba9876543210fedcba9876543210", "reply to request"},
		{"no sender", goChoriaReply(t, id, "", `{}`), id, "no sender"},
		{"not JSON", []byte("nope"), id, "decode reply transport"},
		{"wrong transport", []byte(`{"protocol":"choria:transport:2","data":""}`), id, "transport protocol"},
		{"tampered", tampered, id, "hash does not match"},
		{"body not JSON", goChoriaReply(t, id, "n1", `not json`), id, "decode reply from n1"},
	} {
		if _, err := decodeV1Reply(c.data, c.id); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
