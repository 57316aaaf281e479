// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	edgeconfig "github.com/seed96588659/muster/edge/config"
)

// loadEdge loads file with env set through edge/config.Load, as `muster-edge run --config` does.
func loadEdge(t *testing.T, file string, env map[string]string) (*edgeconfig.Config, []string, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	fs := pflag.NewFlagSet("muster-edge", pflag.ContinueOnError)
	edgeconfig.BindFlags(fs)
	if err := fs.Parse([]string{"--config", file}); err != nil {
		t.Fatal(err)
	}
	return edgeconfig.Load(fs)
}

// loadCoordinator loads file with env through coordinator/config.Load (in coordcheck).
func loadCoordinator(t *testing.T, file string, env map[string]string) (map[string]any, error) {
	t.Helper()
	cmd := exec.Command(bins.coordcheck, "load", file)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("%s", strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, err
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		return nil, fmt.Errorf("coordcheck output %q: %v", out, err)
	}
	return got, nil
}

// TestExampleEdgeConfig_Loads: deploy/config/edge.yaml with deploy/systemd/edge.env.example filled
// in loads through the edge's loader with no warning (no unknown or ignored key, no pause token
// the network could read: the monitor listens on loopback) as a standalone edge.
func TestExampleEdgeConfig_Loads(t *testing.T) {
	dir := t.TempDir()
	file := stage(t, dir, "edge.yaml", string(readRepo(t, "deploy/config/edge.yaml")))
	env := operatorEnv(t, "deploy/systemd/edge.env.example")
	c, warnings, err := loadEdge(t, file, env)
	if err != nil {
		t.Fatalf("deploy/config/edge.yaml does not load: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("deploy/config/edge.yaml loads with warnings: %q", warnings)
	}
	if c.Region != "eu" || c.Site != "eu" || !c.Standalone() || c.Token != env["MUSTER_EDGE_TOKEN"] || c.PauseToken == "" {
		t.Errorf("loaded as region %q site %q standalone %v token from env %v pause token set %v",
			c.Region, c.Site, c.Standalone(), c.Token == env["MUSTER_EDGE_TOKEN"], c.PauseToken != "")
	}
	if c.MonitorBind != "127.0.0.1" {
		t.Errorf("monitor_bind %q: the example's monitor must listen on loopback only", c.MonitorBind)
	}
	for k := range env {
		if !strings.HasPrefix(k, edgeconfig.EnvPrefix+"_") || !knownEdgeEnv(k) {
			t.Errorf("edge.env.example sets %s, which is no edge key's variable", k)
		}
	}
}

func knownEdgeEnv(name string) bool {
	for _, k := range edgeconfig.Keys() {
		if edgeconfig.EnvName(k) == name {
			return true
		}
	}
	return false
}

// TestExampleCoordinatorConfig_Loads: deploy/config/coordinator.yaml with the unit's environment
// file filled in loads through the coordinator's loader.
func TestExampleCoordinatorConfig_Loads(t *testing.T) {
	dir := t.TempDir()
	file := stage(t, dir, "coordinator.yaml", string(readRepo(t, "deploy/config/coordinator.yaml")))
	got, err := loadCoordinator(t, file, operatorEnv(t, "deploy/systemd/coordinator.env.example"))
	if err != nil {
		t.Fatalf("deploy/config/coordinator.yaml does not load: %v", err)
	}
	if got["node_id"] != "coord-1" || got["bootstrap"] != true || got["admin_token_set"] != true || got["raft_tls"] != true {
		t.Errorf("loaded as %v", got)
	}
}

// TestKubernetesEdgeConfigMaps_Load: every edge Deployment's ConfigMap loads through the edge's
// loader with the environment of the Secret it names, and the Deployment's probes and port
// match the configuration's monitor_port.
func TestKubernetesEdgeConfigMaps_Load(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "deploy", "kubernetes", "edge-*.yaml"))
	if len(files) < 2 {
		t.Fatalf("want an edge manifest per region (at least 2), found %d", len(files))
	}
	secrets := secretEnv(t)
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run(filepath.Base(f), func(t *testing.T) {
			docs := yamlDocs(t, rel)
			cm := byKind(t, docs, "ConfigMap")
			dep := byKind(t, docs, "Deployment")
			body := str(path(cm, "data", "edge.yaml"))
			if body == "" {
				t.Fatalf("%s: ConfigMap has no edge.yaml", rel)
			}
			ctr := path(dep, "spec", "template", "spec", "containers", 0)
			secret := str(path(ctr, "envFrom", 0, "secretRef", "name"))
			env, ok := secrets[secret]
			if !ok {
				t.Fatalf("%s: the edge's secret %q is not in secrets.example.yaml", rel, secret)
			}
			c, warnings, err := loadEdge(t, stage(t, t.TempDir(), "edge.yaml", body), env)
			if err != nil {
				t.Fatalf("%s: ConfigMap edge.yaml does not load: %v", rel, err)
			}
			for _, w := range warnings {
				// The probes reach the monitor on the pod's network, so a pause token set there is
				// warned about, as the example says beside it.
				if c.PauseToken != "" && strings.HasPrefix(w, "pause_token:") {
					continue
				}
				t.Errorf("%s: loads with warning %q", rel, w)
			}
			if c.Standalone() {
				t.Errorf("%s: an edge in Kubernetes must take leases from the coordinators", rel)
			}
			region := str(path(dep, "metadata", "labels", "muster.io/region"))
			if c.Region != region || c.Site != region {
				t.Errorf("%s: the Deployment is labelled region %q, its configuration says region %q site %q", rel, region, c.Region, c.Site)
			}
			port, _ := path(ctr, "ports", 0, "containerPort").(int)
			if port == 0 || port != c.MonitorPort {
				t.Errorf("%s: containerPort %d, monitor_port %d", rel, port, c.MonitorPort)
			}
			if p := str(path(ctr, "readinessProbe", "httpGet", "path")); p != "/readyz" {
				t.Errorf("%s: readiness probe on %q, want /readyz", rel, p)
			}
			if p := str(path(ctr, "livenessProbe", "httpGet", "path")); p != "/healthz" {
				t.Errorf("%s: liveness probe on %q, want /healthz", rel, p)
			}
			cmd := fmt.Sprint(path(ctr, "command"))
			if !strings.Contains(cmd, "muster-edge run --config /etc/muster/edge.yaml") {
				t.Errorf("%s: command %s does not run muster-edge with the mounted configuration", rel, cmd)
			}
			for _, u := range c.Coordinators {
				if !strings.HasPrefix(u, "https://muster-coordinator-api.muster.svc:") {
					t.Errorf("%s: coordinator %s is not the coordinator's API service", rel, u)
				}
			}
		})
	}
}

// TestKubernetesCoordinatorConfigMap_Loads: the StatefulSet's ConfigMap, with the container's
// environment (pod name substituted), secret and command (--bootstrap-expect and --join of every
// member, the same on each: no member bootstraps alone), loads for every member.
func TestKubernetesCoordinatorConfigMap_Loads(t *testing.T) {
	const rel = "deploy/kubernetes/coordinator.yaml"
	docs := yamlDocs(t, rel)
	body := str(path(byKind(t, docs, "ConfigMap"), "data", "config.yaml"))
	sts := byKind(t, docs, "StatefulSet")
	ctr := path(sts, "spec", "template", "spec", "containers", 0)
	var args []string
	for _, a := range list(path(ctr, "command")) {
		args = append(args, fmt.Sprint(a))
	}
	replicas := atoi(t, fmt.Sprint(path(sts, "spec", "replicas")))
	var expect string
	var joins []string
	for i, a := range args {
		switch {
		case a == "--bootstrap" || a == "--bootstrap=true":
			t.Errorf("%s: the command bootstraps alone (%s): a member with a lost volume would found a second cluster", rel, a)
		case a == "--bootstrap-expect" && i+1 < len(args):
			expect = args[i+1]
		case a == "--join" && i+1 < len(args):
			joins = append(joins, args[i+1])
		}
	}
	if expect != strconv.Itoa(replicas) || len(joins) != replicas {
		t.Fatalf("%s: the command does not start every member with --bootstrap-expect %d and --join of all %d: %q", rel, replicas, replicas, args)
	}
	secret := str(path(ctr, "envFrom", 0, "secretRef", "name"))
	base, ok := secretEnv(t)[secret]
	if !ok {
		t.Fatalf("%s: secret %q is not in secrets.example.yaml", rel, secret)
	}
	file := stage(t, t.TempDir(), "config.yaml", body)
	for i := range replicas {
		extra := map[string]string{"MUSTER_BOOTSTRAP_EXPECT": expect, "MUSTER_JOIN": strings.Join(joins, " ")}
		pod := fmt.Sprintf("muster-coordinator-%d", i)
		if !slices.Contains(joins, "https://"+pod+".muster-coordinator.muster.svc:8443") {
			t.Errorf("%s: --join does not name %s", rel, pod)
		}
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		for _, e := range list(path(ctr, "env")) {
			name, val := str(path(e, "name")), str(path(e, "value"))
			if val != "" {
				env[name] = strings.ReplaceAll(val, "$(POD_NAME)", pod)
			}
		}
		got, err := loadCoordinator(t, file, env)
		if err != nil {
			t.Fatalf("%s as %s: %v", rel, pod, err)
		}
		if got["node_id"] != pod || got["http_advertise"] != "https://"+pod+".muster-coordinator.muster.svc:8443" {
			t.Errorf("%s as %s: loaded as %v", rel, pod, got)
		}
	}
}

func byKind(t *testing.T, docs []map[string]any, kind string) map[string]any {
	t.Helper()
	for _, d := range docs {
		if d["kind"] == kind {
			return d
		}
	}
	t.Fatalf("no %s in the manifest", kind)
	return nil
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number: %v", s, err)
	}
	return n
}
