// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"crypto/md5"
	"encoding/hex"
	"testing"
	"time"
)

func TestTimeouts_FollowTheDDLsPlusDiscovery(t *testing.T) {
	tt, err := NewTimeouts(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent, action string
		want          time.Duration
	}{
		{"rpcutil", "inventory", 4 * time.Second},
		{"choria_provision", "configure", 22 * time.Second},
		{"choria_provision", "gen25519", 22 * time.Second},
		{"choria_provision", "release_update", 25 * time.Second},
		{"other", "x", 12 * time.Second},
	} {
		if got := tt.For(c.agent, c.action); got != c.want {
			t.Errorf("%s#%s: %v, want %v", c.agent, c.action, got, c.want)
		}
	}

	long, err := NewTimeouts(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := long.For("choria_provision", "release_update"); got != 30*time.Second {
		t.Errorf("release_update with a 10 s discovery timeout: %v, want 30s", got)
	}
}

func TestConn_RequestTimeoutOverridesTheDefaults(t *testing.T) {
	tt, err := NewTimeouts(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	derived := &Conn{timeouts: tt}
	flat := &Conn{timeouts: tt, timeout: 3 * time.Second}
	update := Request{Agent: "choria_provision", Action: "release_update"}
	if got := derived.timeoutOf(update); got != 25*time.Second {
		t.Errorf("derived release_update: %v", got)
	}
	if got := flat.timeoutOf(update); got != 3*time.Second {
		t.Errorf("ConnOptions.Timeout: %v, want 3s", got)
	}
	update.Timeout = 40 * time.Second
	for _, c := range []*Conn{derived, flat} {
		if got := c.timeoutOf(update); got != 40*time.Second {
			t.Errorf("Request.Timeout: %v, want 40s", got)
		}
	}
}

func TestReplyPrefix_IsMD5OfTheCallerOutsideFIPSMode(t *testing.T) {
	// md5("choria=edge") as go-choria's ReplyTarget writes it; the FIPS 140 case runs in
	// sandbox/rpcsuite/fips, a test binary of its own.
	want := "provisioning.reply." + md5Hex("choria=edge") + "."
	if got := replyPrefix("provisioning", "choria=edge"); got != want {
		t.Fatalf("replyPrefix = %q, want %q", got, want)
	}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
