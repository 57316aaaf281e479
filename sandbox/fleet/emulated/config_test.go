// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"context"
	"strings"
	"testing"
)

func TestStart_RefusesBadConfigWithTheFieldNamed(t *testing.T) {
	ok := Config{BrokerURL: "nats://127.0.0.1:1", JWT: "a.e30.c", Count: 1}
	cases := map[string]struct {
		mut  func(*Config)
		want string
	}{
		"no broker":   {func(c *Config) { c.BrokerURL = "" }, "BrokerURL is required"},
		"no jwt":      {func(c *Config) { c.JWT = "" }, "JWT is required"},
		"bad jwt":     {func(c *Config) { c.JWT = "not-a-jwt" }, "provisioning JWT: want 3 dot-separated parts"},
		"bad claims":  {func(c *Config) { c.JWT = "a.bm90LWpzb24.c" }, "provisioning JWT claims"},
		"bad prefix":  {func(c *Config) { c.Prefix = "emu*" }, "Prefix \"emu*\" may not contain"},
		"negative":    {func(c *Config) { c.Count = -1 }, "Count -1 is negative"},
		"unreachable": {func(c *Config) {}, "connect nats://127.0.0.1:1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := ok
			tc.mut(&cfg)
			f, err := Start(context.Background(), cfg)
			if err == nil {
				f.Stop()
				t.Fatal("Start accepted the configuration")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestJWTAllowsUpdate_ReadsTheUpdateClaim(t *testing.T) {
	// {"update":true} and {"update":false} as base64url payloads.
	if ok, err := jwtAllowsUpdate("h.eyJ1cGRhdGUiOnRydWV9.s"); err != nil || !ok {
		t.Fatalf("update:true read as %v (%v)", ok, err)
	}
	if ok, err := jwtAllowsUpdate("h.eyJ1cGRhdGUiOmZhbHNlfQ.s"); err != nil || ok {
		t.Fatalf("update:false read as %v (%v)", ok, err)
	}
}
