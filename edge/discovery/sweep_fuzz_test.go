// SPDX-License-Identifier: Apache-2.0

package discovery

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/choria-io/go-choria/choria"
	cconfig "github.com/choria-io/go-choria/config"

	"github.com/seed96588659/muster/pkg/api"
)

// testFramework is a go-choria framework on its default configuration: what a sweep decodes
// replies with.
func testFramework(tb testing.TB) *choria.Framework {
	tb.Helper()
	cfg, err := cconfig.NewDefaultConfig()
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Identity = "edge.example.net"
	cfg.OverrideCertname = "edge.example.net"
	cfg.Choria.SecurityProvider = "file"
	cfg.DisableTLS = true
	fw, err := choria.NewWithConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return fw
}

// transportV1 and transportV2 are discovery replies as go-choria's v1 and v2 transports carry
// them, sent by sender.
func transportV1(sender string) string {
	data := base64.StdEncoding.EncodeToString([]byte(`{"protocol":"choria:secure:reply:1","message":"e30=","hash":"x"}`))
	return fmt.Sprintf(`{"protocol":"choria:transport:1","data":%q,"headers":{"mc_sender":%s,"seen-by":[]}}`, data, jsonString(sender))
}

func transportV2(sender string) string {
	data := base64.StdEncoding.EncodeToString([]byte(`{"protocol":"io.choria.protocol.v2.secure_reply","reply":"e30=","hash":"x"}`))
	return fmt.Sprintf(`{"protocol":"io.choria.protocol.v2.transport","data":%q,"headers":{"sender":%s}}`, data, jsonString(sender))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzReplySender: whatever arrives on a sweep's reply subject (anyone on the provisioning broker
// may publish there) is decoded without a panic, and an identity is taken only when the API would
// take it.
func FuzzReplySender(f *testing.F) {
	fw := testFramework(f)
	for _, s := range []string{
		transportV1("n1.example.net"), transportV2("n2.example.net"),
		transportV1(""), transportV1("n\u001b]52;c;eA==\u0007"), transportV1("two words"),
		`{"protocol":"choria:transport:1","data":"e30="}`,
		`{"protocol":"choria:transport:1","data":"e30=","headers":null}`,
		`{"protocol":"io.choria.protocol.v2.transport","data":"e30="}`,
		`{"protocol":"io.choria.protocol.v2.transport","data":"e30=","headers":null}`,
		`{"protocol":"choria:transport:9"}`, `null`, `not json`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := replySender(fw.NewTransportFromJSON, data)
		if err != nil {
			if id != "" {
				t.Fatalf("identity %q with error %v", id, err)
			}
			return
		}
		if err := api.ValidateName("identity", id); err != nil {
			t.Fatalf("identity %q taken from a reply: %v", id, err)
		}
	})
}

// TestReplySender_TakesOnlyValidIdentities names what was wrong with each reply it refuses.
func TestReplySender_TakesOnlyValidIdentities(t *testing.T) {
	fw := testFramework(t)
	for _, c := range []struct {
		data, id, err string
	}{
		{transportV1("n1.example.net"), "n1.example.net", ""},
		{transportV2("n2.example.net"), "n2.example.net", ""},
		{transportV1(""), "", "must not be empty"},
		{transportV1("n\u001b]52;c;eA==\u0007"), "", "not allowed"},
		{`{"protocol":"choria:transport:1","data":"e30=","headers":null}`, "", "no headers"},
		{`{"protocol":"io.choria.protocol.v2.transport","data":"e30=","headers":null}`, "", "no headers"},
		{`{"protocol":"io.choria.protocol.v2.transport","data":"e30="}`, "", "must not be empty"},
		{`not json`, "", "discovery reply"},
	} {
		id, err := replySender(fw.NewTransportFromJSON, []byte(c.data))
		switch {
		case c.err == "" && (err != nil || id != c.id):
			t.Errorf("%s: got %q, %v; want %q", c.data, id, err, c.id)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %q, %v; want an error saying %q", c.data, id, err, c.err)
		}
	}
}
