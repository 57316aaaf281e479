// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// BenchmarkV1Encode is the client's cost of one request before it is published: a configure
// of about 1.5 KB, as the host flow sends, signed with RSA-2048 and unsigned.
func BenchmarkV1Encode(b *testing.B) {
	signer, _ := testSigner(b)
	enc := &v1Encoder{senderID: "edge-eu-1.mcollective", callerID: "choria=edge-eu-1.mcollective", collective: "provisioning", signer: signer}
	cfg, _ := json.Marshal(Configuration{Token: "token", Config: `{"identity":"n1","plugin.choria.server.provision":"false","x":"` + strings.Repeat("y", 1200) + `"}`})
	req := Request{Agent: "choria_provision", Action: "configure", Identity: "n1.example.net", Data: cfg}
	const id = "0123456789abcdef0123456789abcdef"
	for _, sign := range []bool{true, false} {
		name := map[bool]string{true: "signed", false: "unsigned"}[sign]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			now := time.Now()
			for b.Loop() {
				if _, err := enc.encode(id, req, "provisioning.reply.abc."+id, sign, now, 60); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkV1DecodeReply decodes an inventory reply (about 2 KB of facts) as Conn does.
func BenchmarkV1DecodeReply(b *testing.B) {
	const id = "0123456789abcdef0123456789abcdef"
	facts, _ := json.Marshal(map[string]string{"os": "linux", "blob": strings.Repeat("z", 2000)})
	body := `{"statuscode":0,"statusmsg":"OK","data":{"agents":["rpcutil","choria_provision"],"facts":` + string(facts) + `,"version":"0.29.4","upgradable":true}}`
	data := goChoriaReply(b, id, "n1.example.net", body)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeV1Reply(data, id); err != nil {
			b.Fatal(err)
		}
	}
}
