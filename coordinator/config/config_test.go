// SPDX-License-Identifier: Apache-2.0

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

const (
	edgeTok  = "edge-token-0123456789"
	adminTok = "admin-token-0123456789"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "coordinator.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse flags %v: %v", args, err)
	}
	return Load(fs)
}

func TestLoad_FlagsOverEnvOverFileOverDefaults(t *testing.T) {
	file := writeFile(t, `
node_id: from-file
data_dir: /var/lib/from-file
raft:
  bind: 127.0.0.1:7101
  election_timeout: 2s
  heartbeat_timeout: 2s
lease:
  ttl: 40s
  grace: 7s
auth:
  edge_tokens: [`+edgeTok+`]
  admin_token: `+adminTok+`
`)
	t.Setenv("MUSTER_RAFT_BIND", "127.0.0.1:7202")
	t.Setenv("MUSTER_LEASE_TTL", "50s")
	t.Setenv("MUSTER_NODE_ID", "from-env")

	c, err := load(t, "--config", file, "--node-id", "from-flag", "--lease-ttl", "1m")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"node_id (flag over env and file)", c.NodeID, "from-flag"},
		{"lease.ttl (flag over env and file)", c.Lease.TTL, time.Minute},
		{"raft.bind (env over file)", c.Raft.Bind, "127.0.0.1:7202"},
		{"lease.grace (file over default)", c.Lease.Grace, 7 * time.Second},
		{"raft.election_timeout (file)", c.Raft.ElectionTimeout, 2 * time.Second},
		{"data_dir (file)", c.DataDir, "/var/lib/from-file"},
		{"lease.max_attempts (default)", c.Lease.MaxAttempts, 5},
		{"http.bind (default)", c.HTTP.Bind, "127.0.0.1:8000"},
		{"http.advertise (derived)", c.HTTP.Advertise, "http://127.0.0.1:8000"},
		{"raft.advertise (derived from env's bind)", c.Raft.Advertise, "127.0.0.1:7202"},
		{"http.max_body_bytes (default)", c.HTTP.MaxBodyBytes, int64(1 << 20)},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
	if len(c.Auth.EdgeTokens) != 1 || c.Auth.EdgeTokens[0] != edgeTok {
		t.Errorf("auth.edge_tokens = %d tokens, want the file's one", len(c.Auth.EdgeTokens))
	}
}

func TestLoad_ConfigFileFromEnvAndListsFromEnv(t *testing.T) {
	file := writeFile(t, "node_id: c1\ndata_dir: /tmp/x\n")
	t.Setenv("MUSTER_CONFIG", file)
	t.Setenv("MUSTER_AUTH_EDGE_TOKENS", edgeTok+", other-edge-token-9876543210")
	t.Setenv("MUSTER_JOIN", "http://127.0.0.1:8001 http://127.0.0.1:8002")
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", adminTok)
	c, err := load(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeID != "c1" || len(c.Auth.EdgeTokens) != 2 || len(c.Join) != 2 || c.Join[1] != "http://127.0.0.1:8002" {
		t.Fatalf("got node %q, %d edge tokens, join %v", c.NodeID, len(c.Auth.EdgeTokens), c.Join)
	}
}

func TestLoad_RefusesBadValuesNamingTheKey(t *testing.T) {
	base := []string{"--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edge-tokens", edgeTok}
	cases := []struct {
		name string
		args []string
		file string
		want string
	}{
		{"duration without unit", []string{"--lease-ttl", "30"}, "", `lease.ttl: "30" is not a duration`},
		{"duration in file without unit", nil, "lease:\n  grace: 5\n", "lease.grace: 5 has no unit"},
		{"short ttl", []string{"--lease-ttl", "10ms"}, "", "lease.ttl: 10ms is below 1s"},
		{"grace below drift", []string{"--lease-grace", "100ms"}, "", "lease.grace: 100ms is below lease.max_clock_drift"},
		{"lock window below go-choria's", []string{"--lease-lock-window", "1m"}, "", "lease.lock_window: 1m0s is below go-choria's provisioning lock of 2m0s"},
		{"long poll eats the ttl", []string{"--lease-ttl", "30s", "--lease-max-wait", "20s"}, "", "lease.max_wait: 20s leaves less than 2/3 of lease.ttl"},
		{"bad port", []string{"--raft-bind", "127.0.0.1:99999"}, "", "raft.bind: \"127.0.0.1:99999\" has an invalid port"},
		{"no port", []string{"--http-bind", "localhost"}, "", "http.bind: \"localhost\" is not host:port"},
		{"wildcard without advertise", []string{"--http-bind", "0.0.0.0:8000"}, "", "http.advertise: \"0.0.0.0:8000\": an advertised address needs a concrete host"},
		{"bootstrap and join", []string{"--bootstrap", "--join", "http://127.0.0.1:8001", "--auth-admin-token", adminTok}, "", "bootstrap and join"},
		{"join not a URL", []string{"--join", "127.0.0.1:8001", "--auth-admin-token", adminTok}, "", "join[0]: \"127.0.0.1:8001\" must start with http://"},
		{"join without admin token", []string{"--join", "http://127.0.0.1:8001"}, "", "auth.admin_token: needed to join"},
		{"bootstrap_expect negative", []string{"--bootstrap-expect", "-1"}, "", "bootstrap_expect: -1, want at least 1"},
		{"bootstrap_expect and bootstrap", []string{"--bootstrap-expect", "1", "--bootstrap"}, "", "bootstrap and bootstrap_expect"},
		{"bootstrap_expect without join", []string{"--bootstrap-expect", "3"}, "", "bootstrap_expect: 3 needs join to name the 3 members (this one may be among them), got 0"},
		{"bootstrap_expect with too few to join", []string{"--bootstrap-expect", "3", "--join", "http://127.0.0.1:8001", "--auth-admin-token", adminTok}, "", "got 1 address(es)"},
		{"bootstrap_expect with too many to join", []string{"--bootstrap-expect", "2", "--join", "http://127.0.0.1:8001,http://127.0.0.1:8002,http://127.0.0.1:8003", "--auth-admin-token", adminTok}, "", "got 3 address(es)"},
		{"short edge token", []string{"--auth-edge-tokens", "short"}, "", "auth.edge_tokens[1]: shorter than 16"},
		{"admin equals edge", []string{"--auth-admin-token", edgeTok}, "", "auth.admin_token: equals an edge token"},
		{"lease over heartbeat", []string{"--raft-leader-lease-timeout", "1s"}, "", "raft.leader_lease_timeout: 1s must not exceed raft.heartbeat_timeout"},
		{"heartbeat under five round trips", []string{"--raft-round-trip", "150ms", "--raft-election-timeout", "2s"}, "", "raft.heartbeat_timeout: 500ms is under 5 round trips between members (raft.round_trip 150ms): elections would flap; use at least 750ms"},
		{"negative round trip", []string{"--raft-round-trip", "-1s"}, "", "raft.round_trip: -1s is negative"},
		{"max attempts zero", []string{"--lease-max-attempts", "0"}, "", "lease.max_attempts: 0 is outside 1..1000"},
		{"max attempts text", []string{"--lease-max-attempts", "many"}, "", `lease.max_attempts: "many" is not a whole number`},
		{"whole number beyond int64 in file", nil, "raft:\n  snapshot_threshold: 1e20\n", "raft.snapshot_threshold: 1e+20 is out of range"},
		{"infinity in file", nil, "lease:\n  max_nodes: -.inf\n", "lease.max_nodes: -Inf is out of range"},
		{"body too small", []string{"--http-max-body-bytes", "10"}, "", "http.max_body_bytes: 10 is outside"},
		{"cert without key", []string{"--tls-cert", "/etc/hosts"}, "", "tls.cert and tls.key: give both or neither"},
		{"missing key file", []string{"--tls-cert", "/etc/hosts", "--tls-key", "/nonexistent/key.pem"}, "", "tls.key: stat /nonexistent/key.pem"},
		{"client certs without CA", []string{"--auth-client-certs"}, "", "auth.client_certs: needs tls.cert"},
		{"unknown key in file", nil, "lease:\n  tll: 30s\n", "unknown key(s) lease.tll (did you mean lease.ttl?)"},
		{"unknown key at the wrong level", nil, "ttl: 30s\n", "unknown key(s) ttl (did you mean lease.ttl?)"},
		{"bad log level", []string{"--log-level", "loud"}, "", `log.level: "loud" is not debug`},
		{"history zero", []string{"--ledger-history-length", "0"}, "", "ledger.history_length: 0 is outside"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{}, base...), c.args...)
			if c.file != "" {
				args = append(args, "--config", writeFile(t, c.file))
			}
			_, err := load(t, args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load(%v) = %v, want an error containing %q", args, err, c.want)
			}
		})
	}
}

func TestLoad_RefusesAnEdgeAPIOpenToNobody(t *testing.T) {
	_, err := load(t, "--node-id", "c1", "--data-dir", "/tmp/d")
	if err == nil || !strings.Contains(err.Error(), "auth.edge_tokens: empty") {
		t.Fatalf("got %v", err)
	}
}

func TestAuth_StringHidesTokens(t *testing.T) {
	a := Auth{EdgeTokens: []string{edgeTok}, AdminToken: adminTok}
	for _, s := range []string{a.String(), a.GoString()} {
		if strings.Contains(s, edgeTok) || strings.Contains(s, adminTok) {
			t.Fatalf("token printed: %s", s)
		}
	}
}

func TestLoad_ExampleFileIsValidOnceItsFilesExist(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"coord-1.pem", "coord-1.key", "ca.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("MUSTER_TLS_CERT", filepath.Join(dir, "coord-1.pem"))
	t.Setenv("MUSTER_TLS_KEY", filepath.Join(dir, "coord-1.key"))
	t.Setenv("MUSTER_TLS_CA", filepath.Join(dir, "ca.pem"))
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", adminTok)
	c, err := load(t, "--config", "example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.Advertise != "https://coord-1.example.net:8443" || len(c.Join) != 2 || c.BootstrapExpect != 3 || !c.Auth.ClientCerts || c.Lease.LockWindow != 2*time.Minute {
		t.Fatalf("example loaded as %+v", c)
	}
}

func TestLoad_BootstrapExpectFromTheEnvironment(t *testing.T) {
	t.Setenv("MUSTER_BOOTSTRAP_EXPECT", "3")
	t.Setenv("MUSTER_JOIN", "http://127.0.0.1:8001 http://127.0.0.1:8002 http://127.0.0.1:8003")
	t.Setenv("MUSTER_AUTH_ADMIN_TOKEN", adminTok)
	c, err := load(t, "--node-id", "c1", "--data-dir", "/tmp/d", "--auth-edge-tokens", edgeTok)
	if err != nil {
		t.Fatal(err)
	}
	if c.BootstrapExpect != 3 || c.Bootstrap || len(c.Join) != 3 {
		t.Fatalf("bootstrap_expect %d, bootstrap %t, join %v", c.BootstrapExpect, c.Bootstrap, c.Join)
	}
}
