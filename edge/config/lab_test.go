// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/config"
)

// testLab writes a lab.json in the sandbox's schema with the given regions, each with a real
// client configuration file, and a sample helper; it returns both paths.
func testLab(t *testing.T, regions ...string) (labJSON, helper string) {
	t.Helper()
	dir := t.TempDir()
	helper = filepath.Join(dir, "bin", config.SampleHelperName)
	if err := os.MkdirAll(filepath.Dir(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rs := map[string]any{}
	for i, r := range regions {
		cfg := filepath.Join(dir, r+"-client-1.conf")
		if err := os.WriteFile(cfg, []byte("identity = "+r+"-client-1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		rs[r] = map[string]any{
			"broker_url":                 "nats://127.0.0.1:" + string(rune('1'+i)) + "4222",
			"client_config":              filepath.Join(dir, r+"-client.conf"),
			"clients":                    []map[string]string{{"identity": r + "-client-1", "config": cfg}, {"identity": r + "-client-2", "config": "unused"}},
			"provisioning_token":         r + "-token",
			"provisioning_password":      r + "-password",
			"jwt_signer_public_key":      "abcdef",
			"jwt_signer_public_key_file": filepath.Join(dir, r+"-signer.pub"),
			"emulated_count":             10,
		}
	}
	b, err := json.Marshal(map[string]any{
		"dir":                dir,
		"updates_repository": "http://127.0.0.1:8081/repo",
		"upgrade_version":    "0.30.1",
		"regions":            rs,
	})
	if err != nil {
		t.Fatal(err)
	}
	labJSON = filepath.Join(dir, "lab.json")
	if err := os.WriteFile(labJSON, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return labJSON, helper
}

func TestFromLab_RegionNeedsNoOtherSetUp(t *testing.T) {
	isolate(t)
	lab, helper := testLab(t, "east", "west")
	c, err := config.FromLab(lab, "west", config.WithSampleHelper(helper))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(lab)
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
		{"lab", c.Lab, lab},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
}

func TestFromLab_RegionChoice(t *testing.T) {
	isolate(t)
	two, helper := testLab(t, "east", "west")
	if _, err := config.FromLab(two, "", config.WithSampleHelper(helper)); err == nil || !strings.Contains(err.Error(), "east, west") {
		t.Errorf("no region in a two-region lab: %v, want an error naming both", err)
	}
	if _, err := config.FromLab(two, "north", config.WithSampleHelper(helper)); err == nil || !strings.Contains(err.Error(), `"north"`) || !strings.Contains(err.Error(), "east, west") {
		t.Errorf("unknown region: %v, want an error naming it and the lab's", err)
	}
	one, helper := testLab(t, "solo")
	c, err := config.FromLab(one, "", config.WithSampleHelper(helper))
	if err != nil || c.Region != "solo" {
		t.Errorf("one-region lab: %+v %v, want region solo", c, err)
	}
}

func TestFromLab_MissingSampleHelperNamesIt(t *testing.T) {
	isolate(t)
	lab, _ := testLab(t, "east")
	missing := filepath.Join(t.TempDir(), config.SampleHelperName)
	_, err := config.FromLab(lab, "east", config.WithSampleHelper(missing))
	if got := fieldKeys(err); len(got) != 1 || got[0] != "helper" || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v, want one naming helper and %s", err, missing)
	}
}

func TestFromLab_HexKeyWhenNoKeyFile(t *testing.T) {
	isolate(t)
	lab, helper := testLab(t, "east")
	var doc map[string]any
	b, _ := os.ReadFile(lab)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["regions"].(map[string]any)["east"].(map[string]any)["jwt_signer_public_key_file"] = ""
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(lab, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.FromLab(lab, "east", config.WithSampleHelper(helper))
	if err != nil || c.JWTVerifyCert != "abcdef" {
		t.Errorf("%+v %v, want jwt_verify_cert abcdef", c, err)
	}
}

func TestLoad_LabDefaultsSitBelowFileEnvAndFlags(t *testing.T) {
	isolate(t)
	lab, helper := testLab(t, "east", "west")
	file := writeFile(t, "edge.yaml", "interval: 2m\nsite: lab-file-site\n")
	t.Setenv("MUSTER_EDGE_MONITOR_PORT", "9100")
	c, warns, err := config.Load(flags(t, "--lab", lab, "--region", "east", "--config", file,
		"--workers", "5", "--helper-persistent", "--helper", "/bin/other-helper"),
		config.WithSampleHelper(helper))
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
		{"region (flag picks the lab region)", c.Region, "east"},
		{"token (lab)", c.Token, "east-token"},
		{"edge_name (lab)", c.EdgeName, "east-client-1"},
		{"interval (file over lab)", c.Interval, 2 * time.Minute},
		{"site (file over lab)", c.Site, "lab-file-site"},
		{"monitor_port (env)", c.MonitorPort, 9100},
		{"workers (flag)", c.Workers, 5},
		{"helper_persistent (flag)", c.HelperPersistent, true},
		{"helper (flag over lab)", c.Helper, "/bin/other-helper"},
		{"lab", c.Lab, lab},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.key, ch.got, ch.want)
		}
	}
}

func TestLoad_LabHelperOverriddenNeedsNoSampleHelper(t *testing.T) {
	isolate(t)
	lab, _ := testLab(t, "east")
	missing := filepath.Join(t.TempDir(), config.SampleHelperName)
	if _, _, err := config.Load(flags(t, "--lab", lab), config.WithSampleHelper(missing)); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("lab without its sample helper: %v, want an error naming %s", err, missing)
	}
	t.Setenv("MUSTER_EDGE_HELPER", "/bin/site-helper")
	c, _, err := config.Load(flags(t, "--lab", lab), config.WithSampleHelper(missing))
	if err != nil || c.Helper != "/bin/site-helper" {
		t.Errorf("%+v %v, want the helper from the environment", c, err)
	}
}
