// SPDX-License-Identifier: Apache-2.0

package edgefile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// testLab describes a lab with the given regions, each with a real client configuration file,
// and writes a sample helper; it returns both.
func testLab(t *testing.T, regions ...string) (info lab.Info, helper string) {
	t.Helper()
	dir := t.TempDir()
	helper = filepath.Join(dir, "bin", edgefile.SampleHelper)
	if err := os.MkdirAll(filepath.Dir(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	info = lab.Info{Dir: dir, UpdatesRepository: "http://127.0.0.1:8081/repo", UpgradeVersion: "0.30.1", Regions: map[string]lab.RegionInfo{}}
	for i, r := range regions {
		cfg := filepath.Join(dir, r+"-client-1.conf")
		if err := os.WriteFile(cfg, []byte("identity = "+r+"-client-1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		info.Regions[r] = lab.RegionInfo{
			BrokerURL:              "nats://127.0.0.1:" + string(rune('1'+i)) + "4222",
			ClientConfig:           filepath.Join(dir, r+"-client.conf"),
			Clients:                []lab.ClientInfo{{Identity: r + "-client-1", Config: cfg}, {Identity: r + "-client-2", Config: "unused"}},
			ProvisioningToken:      r + "-token",
			ProvisioningPassword:   r + "-password",
			JWTSignerPublicKey:     "abcdef",
			JWTSignerPublicKeyFile: filepath.Join(dir, r+"-signer.pub"),
			EmulatedCount:          10,
		}
	}
	return info, helper
}

// writeConfig writes region's edge configuration into a test directory and returns its path.
func writeConfig(t *testing.T, info lab.Info, region, helper string) string {
	t.Helper()
	body, err := edgefile.Encode(info, region, helper)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), edgefile.Name)
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// isolate clears every MUSTER_EDGE_ variable and points HOME at an empty directory, so neither
// the caller's environment nor a Choria user configuration on the machine reaches a test.
func isolate(t *testing.T) {
	t.Helper()
	testkit.IsolateEnv(t, config.EnvPrefix+"_")
}

// load reads file as `muster-edge run --config FILE args...` does.
func load(t *testing.T, file string, args ...string) (*config.Config, []string, error) {
	t.Helper()
	fs := pflag.NewFlagSet("muster-edge", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse(append([]string{"--config", file}, args...)); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return config.Load(fs)
}

func TestEncode_RegionLoadsWithNoOtherSetUp(t *testing.T) {
	isolate(t)
	info, helper := testLab(t, "east", "west")
	file := writeConfig(t, info, "west", helper)
	c, warns, err := load(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %q, want none", warns)
	}
	dir := info.Dir
	checks := []struct {
		key       string
		got, want any
	}{
		{"region", c.Region, "west"},
		{"site", c.Site, "west"},
		{"choria_config", c.ChoriaConfig, filepath.Join(dir, "west-client-1.conf")},
		{"edge_name", c.EdgeName, "west-client-1"},
		{"choria_identity", c.ChoriaIdentity, "west-client-1"},
		{"token", c.Token, "west-token"},
		{"broker_provisioning_password", c.BrokerProvisioningPassword, "west-password"},
		{"jwt_verify_cert", c.JWTVerifyCert, filepath.Join(dir, "west-signer.pub")},
		{"upgrades_repository", c.UpgradesRepository, "http://127.0.0.1:8081/repo"},
		{"features.jwt", c.Features.JWT, true},
		{"helper", c.Helper, helper + " --broker nats://127.0.0.1:24222 --upgrade 0.30.1"},
		{"interval", c.Interval, time.Minute},
		{"workers", c.Workers, config.DefaultWorkers},
		{"monitor_bind", c.MonitorBind, "127.0.0.1"},
		{"state_dir", c.StateDir, filepath.Join(dir, "edge-state", "west")},
		{"file", c.File, file},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
}

func TestSettings_RegionChoice(t *testing.T) {
	isolate(t)
	two, helper := testLab(t, "east", "west")
	if _, err := edgefile.Settings(two, "", helper); err == nil || !strings.Contains(err.Error(), "east, west") {
		t.Errorf("no region in a two-region lab: %v, want an error naming both", err)
	}
	if _, err := edgefile.Settings(two, "north", helper); err == nil || !strings.Contains(err.Error(), `"north"`) || !strings.Contains(err.Error(), "east, west") {
		t.Errorf("unknown region: %v, want an error naming it and the lab's", err)
	}
	one, helper := testLab(t, "solo")
	c, _, err := load(t, writeConfig(t, one, "", helper))
	if err != nil || c.Region != "solo" {
		t.Errorf("one-region lab: %+v %v, want region solo", c, err)
	}
}

func TestSettings_MissingSampleHelperNamesIt(t *testing.T) {
	isolate(t)
	info, _ := testLab(t, "east")
	missing := filepath.Join(t.TempDir(), edgefile.SampleHelper)
	if _, err := edgefile.Settings(info, "east", missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v, want one naming %s", err, missing)
	}
}

func TestSettings_HexKeyWhenNoKeyFile(t *testing.T) {
	isolate(t)
	info, helper := testLab(t, "east")
	r := info.Regions["east"]
	r.JWTSignerPublicKeyFile = ""
	info.Regions["east"] = r
	c, _, err := load(t, writeConfig(t, info, "east", helper))
	if err != nil || c.JWTVerifyCert != "abcdef" {
		t.Errorf("%+v %v, want jwt_verify_cert abcdef", c, err)
	}
}

// TestEncode_EnvironmentAndFlagsOverTheFile: the generated file is an ordinary configuration
// file, so the environment and flags override each of its keys, the helper among them.
func TestEncode_EnvironmentAndFlagsOverTheFile(t *testing.T) {
	isolate(t)
	info, helper := testLab(t, "east", "west")
	file := writeConfig(t, info, "east", helper)
	t.Setenv("MUSTER_EDGE_MONITOR_PORT", "9100")
	t.Setenv("MUSTER_EDGE_INTERVAL", "2m")
	t.Setenv("MUSTER_EDGE_HELPER", "/bin/site-helper")
	c, warns, err := load(t, file, "--site", "lab-flag-site", "--workers", "5", "--helper-persistent")
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings %q", warns)
	}
	checks := []struct {
		key       string
		got, want any
	}{
		{"region (file)", c.Region, "east"},
		{"token (file)", c.Token, "east-token"},
		{"edge_name (file)", c.EdgeName, "east-client-1"},
		{"interval (env over file)", c.Interval, 2 * time.Minute},
		{"helper (env over file)", c.Helper, "/bin/site-helper"},
		{"site (flag over file)", c.Site, "lab-flag-site"},
		{"monitor_port (env)", c.MonitorPort, 9100},
		{"workers (flag)", c.Workers, 5},
		{"helper_persistent (flag)", c.HelperPersistent, true},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
}

// TestEncode_PKISignsWithTheLabsCA: with PKI the file turns features.pki on, whose CSRs its
// helper signs with the lab's CA; a lab region without a CA is refused, naming what is missing.
func TestEncode_PKISignsWithTheLabsCA(t *testing.T) {
	info, helper := testLab(t, "eu")
	if _, err := edgefile.Encode(info, "eu", helper, edgefile.PKI()); err == nil || !strings.Contains(err.Error(), "no CA") {
		t.Fatalf("PKI without a CA: %v", err)
	}
	r := info.Regions["eu"]
	r.CA, r.CAKey = filepath.Join(info.Dir, "ca.pem"), filepath.Join(info.Dir, "ca-key.pem")
	info.Regions["eu"] = r
	body, err := edgefile.Encode(info, "eu", helper, edgefile.PKI())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pki: true", "--ca " + r.CA, "--ca-key " + r.CAKey} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the file lacks %q:\n%s", want, body)
		}
	}
}
