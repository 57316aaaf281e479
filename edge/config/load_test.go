// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/config"
)

func TestLoad_FlagBeatsEnvBeatsFileBeatsDefault(t *testing.T) {
	cases := []struct {
		key, flag      string
		file, env, arg string
		get            func(*config.Config) any
		def, f, e, a   any
	}{
		{key: "workers", flag: "workers", file: "10", env: "20", arg: "30",
			get: func(c *config.Config) any { return c.Workers }, def: 64, f: 10, e: 20, a: 30},
		{key: "interval", flag: "interval", file: "5m", env: "2h", arg: "1d",
			get: func(c *config.Config) any { return c.Interval }, def: time.Minute, f: 5 * time.Minute, e: 2 * time.Hour, a: 24 * time.Hour},
		{key: "site", flag: "site", file: "file-site", env: "env-site", arg: "flag-site",
			get: func(c *config.Config) any { return c.Site }, def: "", f: "file-site", e: "env-site", a: "flag-site"},
		{key: "helper_persistent", flag: "helper-persistent", file: "false", env: "true", arg: "false",
			get: func(c *config.Config) any { return c.HelperPersistent }, def: false, f: false, e: true, a: false},
		{key: "monitor_port", flag: "monitor-port", file: "8080", env: "9090", arg: "7070",
			get: func(c *config.Config) any { return c.MonitorPort }, def: 0, f: 8080, e: 9090, a: 7070},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			isolate(t)
			t.Setenv(config.EnvName("helper"), "/bin/helper")
			file := writeFile(t, "edge.yaml", tc.key+": "+tc.file+"\n")
			steps := []struct {
				name string
				args []string
				env  string
				want any
			}{
				{"default", nil, "", tc.def},
				{"file", []string{"--config", file}, "", tc.f},
				{"env over file", []string{"--config", file}, tc.env, tc.e},
				{"flag over env", []string{"--config", file, "--" + tc.flag + "=" + tc.arg}, tc.env, tc.a},
			}
			for _, s := range steps {
				t.Setenv(config.EnvName(tc.key), s.env)
				c, _, err := config.Load(flags(t, s.args...))
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if got := tc.get(c); got != s.want {
					t.Errorf("%s: %s = %v, want %v", s.name, tc.key, got, s.want)
				}
			}
		})
	}
}

func TestLoad_NestedFeatureFromEnvironment(t *testing.T) {
	isolate(t)
	file := writeFile(t, "edge.yaml", "helper: /bin/helper\njwt_verify_cert: /etc/key.pem\nfeatures:\n  pki: true\n  jwt: false\n")
	t.Setenv("MUSTER_EDGE_FEATURES_JWT", "true")
	c, warns, err := config.Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Features.JWT || !c.Features.PKI {
		t.Errorf("features = %+v, want jwt from the environment and pki from the file", c.Features)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %q, want none", warns)
	}
}

func TestLoad_AnchorExampleConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/choria-provisioner/*.yaml")
	if err != nil || len(files) < 2 {
		t.Fatalf("choria-provisioner examples: %v %v", files, err)
	}
	want := map[string]func(*config.Config) bool{
		"docs-common-settings.yaml": func(c *config.Config) bool {
			return c.Workers == 4 && c.Interval == time.Minute && c.LogLevel == "warn" && c.Site == "testing" &&
				c.Region == "testing" && c.Features.JWT && c.Features.ED25519 && !c.Features.PKI &&
				c.JWTVerifyCert == "e72cba5268b34627b75c5ceae9449ad16d62f15f862c30d4e0e7d2588e2e6259" &&
				c.JWTSigningToken == "/etc/choria-provisioner/credentials/signer.jwt" && c.Token == "s3cret"
		},
		"packager-el.yaml": func(c *config.Config) bool {
			return c.Workers == 4 && c.Interval == 5*time.Minute && c.Insecure && c.MonitorPort == 8080 &&
				c.Features.PKI && c.Features.JWT && c.LogFile == "/var/log/{{cpkg_name}}.log" &&
				c.LifecycleComponent == config.DefaultLifecycleComponent &&
				slices.Equal(c.CertDenyList, config.DefaultCertDenyList()) && c.ServerJWTValidity == config.DefaultServerJWTValidity
		},
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			isolate(t)
			c, warns, err := config.Load(flags(t, "--config", f))
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 0 {
				t.Errorf("warnings %q, want none", warns)
			}
			check, ok := want[filepath.Base(f)]
			if !ok {
				t.Fatalf("no expectations for %s", f)
			}
			if !check(c) {
				t.Errorf("loaded %+v", c)
			}
			if abs, _ := filepath.Abs(f); c.File != f && c.File != abs {
				t.Errorf("File = %q, want %q", c.File, f)
			}
		})
	}
}

func TestLoad_EveryAnchorKeyAcceptedAndMeaninglessOnesWarned(t *testing.T) {
	isolate(t)
	c, warns, err := config.Load(flags(t, "--config", "testdata/every-choria-provisioner-key.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Workers: 8, Interval: 2 * time.Hour, LogFile: "/var/log/choria-provisioner.log", LogLevel: "debug",
		Helper: "/usr/local/bin/helper --site 'dc one'", Token: "toomanysecrets",
		LifecycleComponent: "provision_mode_server", Site: "dc1", MonitorPort: 9999, BrokerPort: 4222,
		BrokerProvisioningPassword: "s3cret", CertDenyList: []string{`\.privileged.choria$`, `^root\.`},
		JWTVerifyCert:   "/etc/choria-provisioner/jwt-verify.pem",
		JWTSigningKey:   "/etc/choria-provisioner/credentials/signer.seed",
		JWTSigningToken: "/etc/choria-provisioner/credentials/signer.jwt", ServerJWTValidity: 30 * 24 * time.Hour,
		RegoPolicy: "/etc/choria-provisioner/policy.rego", LeaderElection: true,
		UpgradesRepository: "https://repo.example.net/choria", UpgradesOptional: true,
		Features: config.Features{JWT: true, ED25519: true, Upgrades: true},
		Region:   "dc1", HelperTimeout: config.DefaultHelperTimeout, LogFormat: config.LogText,
		RequestSigning: config.SigningAuto, BatchSize: config.DefaultBatchSize,
		LeaseMargin: config.DefaultLeaseMargin, DuplicateWindow: config.DefaultDuplicateWindow, StateDir: config.DefaultStateDir,
		NewNodeCheckTimeout: config.DefaultNewNodeCheckTimeout, NewNodesPerSweep: config.DefaultNewNodesPerSweep, NewNodesRate: config.DefaultNewNodesRate,
		NewNodesBurst: config.DefaultNewNodesBurst, DiscoveryMaxNodes: config.DefaultDiscoveryMaxNodes,
		BrokerConnectTimeout: config.DefaultBrokerConnectTimeout,
		File:                 "testdata/every-choria-provisioner-key.yaml",
	}
	if !reflect.DeepEqual(*c, want) {
		t.Errorf("loaded\n%+v\nwant\n%+v", *c, want)
	}
	wantPrefixes := []string{"broker_port: ignored", "rego_policy: ignored"}
	if len(warns) != len(wantPrefixes) {
		t.Fatalf("warnings %q, want one each for %v", warns, wantPrefixes)
	}
	for i, p := range wantPrefixes {
		if !strings.HasPrefix(warns[i], p) {
			t.Errorf("warning %d %q, want it to start %q", i, warns[i], p)
		}
	}
}

func TestLoad_UnknownKeysWarnedOnceEachWithTheLikelyKey(t *testing.T) {
	isolate(t)
	file := writeFile(t, "edge.yaml", `helper: /bin/helper
rego_policy: /etc/policy.rego
colour: blue
jwt: true
workres: 3
features:
  jwtt: true
`)
	t.Setenv("MUSTER_EDGE_REGO_POLICY", "/etc/other.rego")
	t.Setenv("MUSTER_EDGE_WORKER", "3")
	t.Setenv("MUSTER_EDGE_PKI", "true")
	_, warns, err := config.Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"colour: unknown key, ignored",
		"features.jwtt: unknown key, ignored (did you mean features.jwt?)",
		"jwt: unknown key, ignored (did you mean features.jwt?)",
		"rego_policy: ignored: ",
		"workres: unknown key, ignored (did you mean workers?)",
		"MUSTER_EDGE_PKI: unknown environment variable, ignored (did you mean MUSTER_EDGE_FEATURES_PKI?)",
		"MUSTER_EDGE_WORKER: unknown environment variable, ignored (did you mean MUSTER_EDGE_WORKERS?)",
	}
	if len(warns) != len(want) {
		t.Fatalf("warnings\n%s\nwant %d", strings.Join(warns, "\n"), len(want))
	}
	for i := range want {
		if warns[i] != want[i] && !(strings.HasSuffix(want[i], ": ") && strings.HasPrefix(warns[i], want[i])) {
			t.Errorf("warning %d = %q, want %q", i, warns[i], want[i])
		}
	}
}

func TestLoad_InvalidValueNamesTheKey(t *testing.T) {
	const base = "helper: /bin/helper\n"
	cases := []struct {
		name, yaml, key, reason string
	}{
		{"interval below minimum", "interval: 30s", "interval", "30s is below the minimum of 1m"},
		{"interval bad unit", "interval: 5x", "interval", "is not a duration"},
		{"interval a number", "interval: 300", "interval", "expected a duration"},
		{"workers negative", "workers: -1", "workers", "below the minimum of 1"},
		{"workers not a number", "workers: many", "workers", "not a whole number"},
		{"workers beyond int64", "workers: 1e20", "workers", "1e+20 is out of range"},
		{"workers infinite", "workers: -.inf", "workers", "-Inf is out of range"},
		{"interval of years past time.Duration", "interval: 193031y", "interval", "is beyond the range of a duration"},
		{"interval of weeks past time.Duration", "interval: 1e7w", "interval", "is beyond the range of a duration"},
		{"server jwt validity not a number of days", "server_jwt_validity: NaNd", "server_jwt_validity", "is beyond the range of a duration"},
		{"loglevel", "loglevel: loud", "loglevel", "not one of"},
		{"lifecycle dot", "lifecycle_component: a.b", "lifecycle_component", "must not contain"},
		{"lifecycle wildcard", "lifecycle_component: 'a>'", "lifecycle_component", "must not contain"},
		{"lifecycle star", "lifecycle_component: 'a*'", "lifecycle_component", "must not contain"},
		{"pki and ed25519", "jwt_verify_cert: k\njwt_signing_key: s\nfeatures: {pki: true, ed25519: true}", "features.ed25519", "features.pki"},
		{"features scalar", "features: true", "features", "expected a map of pki, jwt, ed25519, upgrades"},
		{"feature not a bool", "features: {jwt: sometimes}", "features.jwt", "not true or false"},
		{"jwt without verify cert", "features: {jwt: true}", "jwt_verify_cert", "required when features.jwt"},
		{"ed25519 without signing key", "jwt_verify_cert: k\nfeatures: {ed25519: true}", "jwt_signing_key", "required when features.ed25519"},
		{"upgrades without repository", "features: {upgrades: true}", "upgrades_repository", "required when features.upgrades"},
		{"repository not a URL", "upgrades_repository: repo", "upgrades_repository", "not a URL"},
		{"monitor port", "monitor_port: 70000", "monitor_port", "not a port"},
		{"deny list regexp", "cert_deny_list: ['(']", "cert_deny_list", "not a regular expression"},
		{"deny list scalar", "cert_deny_list: 7", "cert_deny_list", "expected a list"},
		{"server jwt validity zero", "server_jwt_validity: 0s", "server_jwt_validity", "not a positive duration"},
		{"server jwt validity unit", "server_jwt_validity: 1q", "server_jwt_validity", "not a duration"},
		{"token a number", "token: 12345", "token", "quote the value"},
		{"helper missing", "helper: ''", "helper", "is required"},
		{"helper unbalanced quote", "helper: \"/bin/helper 'x\"", "helper", "cannot be split"},
		{"helper_timeout", "helper_timeout: -1s", "helper_timeout", "not a positive duration"},
		{"log_format", "log_format: xml", "log_format", "not text or json"},
		{"request_signing", "request_signing: sometimes", "request_signing", "not auto, always or never"},
		{"batch_size", "batch_size: -4", "batch_size", "below the minimum of 1"},
		{"region", "region: 'east coast'", "region", "not a region name"},
		{"region from site", "site: 'east coast'", "region", "taken from site"},
		{"edge_name", "edge_name: 'a b'", "edge_name", "not an edge name"},
		{"choria_identity", "choria_identity: 'a/b'", "choria_identity", "not a Choria identity"},
		{"monitor_bind with port", "monitor_bind: '127.0.0.1:80'", "monitor_bind", "give the port in monitor_port"},
		{"coordinator scheme", "coordinators: ['ftp://c1:1']", "coordinators", "scheme must be http or https"},
		{"coordinator credentials", "coordinators: ['https://u:pw@c1:1']", "coordinators", "credentials"},
		{"coordinator twice", "coordinators: ['https://c1:1', 'https://c1:1/']", "coordinators", "listed twice"},
		{"coordinator no host", "coordinators: ['https://:8080']", "coordinators", "no host"},
		{"choria_config missing", "choria_config: /nonexistent/client.conf", "choria_config", "not a readable file"},
		{"string key a map", "site: {a: 1}", "site", "got a map"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			text := base + tc.yaml + "\n"
			if strings.HasPrefix(tc.yaml, "helper:") {
				text = tc.yaml + "\n"
			}
			file := writeFile(t, "edge.yaml", text)
			_, _, err := config.Load(flags(t, "--config", file))
			if err == nil {
				t.Fatalf("%s: loaded, want an error naming %s", tc.yaml, tc.key)
			}
			if got := fieldKeys(err); !slices.Equal(got, []string{tc.key}) {
				t.Errorf("%s: error %q names keys %v, want only %s", tc.yaml, err, got, tc.key)
			}
			if !strings.HasPrefix(err.Error(), tc.key+": ") || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("%s: error %q, want %q and %q", tc.yaml, err, tc.key+": ", tc.reason)
			}
		})
	}
}

func TestLoad_InvalidEnvironmentAndFlagValuesNameTheKey(t *testing.T) {
	cases := []struct {
		env, val string
		args     []string
		key      string
	}{
		{env: "MUSTER_EDGE_WORKERS", val: "abc", key: "workers"},
		{env: "MUSTER_EDGE_FEATURES_JWT", val: "maybe", key: "features.jwt"},
		{env: "MUSTER_EDGE_COORDINATORS", val: `["https://c1:1", 7]`, key: "coordinators"},
		{args: []string{"--interval", "10s"}, key: "interval"},
		{args: []string{"--log-format", "xml"}, key: "log_format"},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			isolate(t)
			t.Setenv(config.EnvName("helper"), "/bin/helper")
			if tc.env != "" {
				t.Setenv(tc.env, tc.val)
			}
			_, _, err := config.Load(flags(t, tc.args...))
			if got := fieldKeys(err); !slices.Equal(got, []string{tc.key}) {
				t.Errorf("error %v names %v, want %s", err, got, tc.key)
			}
		})
	}
}

func TestLoad_ListsFromEnvironment(t *testing.T) {
	isolate(t)
	t.Setenv(config.EnvName("helper"), "/bin/helper")
	t.Setenv("MUSTER_EDGE_COORDINATORS", "https://c1:8443, https://c2:8443")
	t.Setenv("MUSTER_EDGE_COORDINATOR_TOKEN", "edge-secret")
	t.Setenv("MUSTER_EDGE_CERT_DENY_LIST", `["^a{1,3}$", "\\.choria$"]`)
	c, _, err := config.Load(flags(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Coordinators, []string{"https://c1:8443", "https://c2:8443"}) || c.Standalone() {
		t.Errorf("coordinators %q", c.Coordinators)
	}
	if !slices.Equal(c.CertDenyList, []string{"^a{1,3}$", `\.choria$`}) {
		t.Errorf("cert_deny_list %q", c.CertDenyList)
	}
}

func TestLoad_Ed25519ImpliesJWT(t *testing.T) {
	isolate(t)
	file := writeFile(t, "edge.yaml", "helper: h\njwt_verify_cert: k\njwt_signing_key: s\nfeatures: {ed25519: true}\n")
	c, _, err := config.Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Features.JWT {
		t.Error("features.ed25519 did not turn features.jwt on")
	}
}

func TestLoad_ConfigFileFromEnvironmentAndMissingFile(t *testing.T) {
	isolate(t)
	t.Setenv("MUSTER_EDGE_CONFIG", "testdata/choria-provisioner/packager-el.yaml")
	c, _, err := config.Load(flags(t))
	if err != nil || c.Site != "TEST" {
		t.Fatalf("MUSTER_EDGE_CONFIG: %+v %v", c, err)
	}
	_, _, err = config.Load(flags(t, "--config", filepath.Join(t.TempDir(), "none.yaml")))
	if err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("missing file: %v, want an error naming it", err)
	}
	_, _, err = config.Load(flags(t, "--config", writeFile(t, "bad.yaml", "workers: [\n")))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("malformed file: %v, want an error naming it", err)
	}
}

func TestLoad_ChoriaConfigDefaultsToChoriaUserConfigWhenItExists(t *testing.T) {
	isolate(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(config.EnvName("helper"), "/bin/helper")
	rc := filepath.Join(home, ".choriarc")
	if err := os.WriteFile(rc, []byte("identity = edge1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, err := config.Load(flags(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.ChoriaConfig != rc {
		t.Errorf("choria_config = %q, want %q", c.ChoriaConfig, rc)
	}
}

// TestLoad_LeaderElectionTakenWithoutAWarning: leader_election is a key the edge acts on now
// (it campaigns in choria-provisioner's election), from the file or the environment.
func TestLoad_LeaderElectionTakenWithoutAWarning(t *testing.T) {
	isolate(t)
	file := writeFile(t, "edge.yaml", "helper: /bin/helper\nleader_election: true\n")
	c, warns, err := config.Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	if !c.LeaderElection || len(warns) != 0 {
		t.Fatalf("leader_election from the file: %v, warnings %q; want true and none", c.LeaderElection, warns)
	}
	t.Setenv("MUSTER_EDGE_LEADER_ELECTION", "false")
	c, warns, err = config.Load(flags(t, "--config", file))
	if err != nil {
		t.Fatal(err)
	}
	if c.LeaderElection || len(warns) != 0 {
		t.Fatalf("leader_election false from the environment: %v, warnings %q; want false and none", c.LeaderElection, warns)
	}
}
