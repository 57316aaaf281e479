// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/seed96588659/muster/pkg/testkit"
)

// TestShippedSecrets_CommentedOutAndRefusedAsShipped: the environment files the packages install
// and the Kubernetes Secrets example set no secret (each is a commented-out line), and each value
// they show, set as shipped, stops the example configuration from loading with an error naming
// the key: a value nobody replaced never opens anything.
func TestShippedSecrets_CommentedOutAndRefusedAsShipped(t *testing.T) {
	edgeFile := stage(t, t.TempDir(), "edge.yaml", string(readRepo(t, "deploy/config/edge.yaml")))
	coordFile := stage(t, t.TempDir(), "coordinator.yaml", string(readRepo(t, "deploy/config/coordinator.yaml")))
	for _, a := range testkit.ShippedAssignments(t, root) {
		if a.Active {
			t.Errorf("%s:%d sets %s: ship it commented out, so that an unedited file sets nothing", a.File, a.Line, a.Name)
		}
		env := map[string]string{a.Name: a.Value}
		var err error
		if strings.HasPrefix(a.Name, "MUSTER_EDGE_") {
			_, _, err = loadEdge(t, edgeFile, env)
		} else {
			_, err = loadCoordinator(t, coordFile, env)
		}
		if err == nil || !strings.Contains(err.Error(), "shipped example value") {
			t.Errorf("%s:%d %s as shipped: loads (%v); want it refused as the shipped example", a.File, a.Line, a.Name, err)
		}
	}
}

// operatorValue is what an operator puts in place of a shipped example: a value of their own,
// different for every variable; a binding (EDGE@REGION=TOKEN) keeps its binding.
func operatorValue(name, shipped string) string {
	own := strings.ToLower(strings.TrimPrefix(name, "MUSTER_")) + "-0123456789abcdef"
	if i := strings.LastIndex(shipped, "="); i >= 0 {
		return shipped[:i+1] + own
	}
	return own
}

// operatorEnv is a shipped environment file as an operator fills it in: every variable it shows,
// commented out or not, set to a value of their own.
func operatorEnv(t *testing.T, rel string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, a := range testkit.ShippedAssignments(t, root) {
		if a.File == rel {
			out[a.Name] = operatorValue(a.Name, a.Value)
		}
	}
	for k, v := range envFile(t, rel) {
		if _, ok := out[k]; !ok {
			out[k] = v // not a MUSTER_* secret: as shipped
		}
	}
	return out
}

// secretLine is a Secret's stringData entry, commented out or not.
var secretLine = regexp.MustCompile(`^\s*#?\s*(MUSTER_[A-Z0-9_]+):\s+(\S+)\s*$`)

// secretEnv maps each Secret of secrets.example.yaml to its stringData as an operator fills it
// in: every entry it shows, commented out or not, set to a value of their own.
func secretEnv(t *testing.T) map[string]map[string]string {
	t.Helper()
	const rel = "deploy/kubernetes/secrets.example.yaml"
	out := map[string]map[string]string{}
	for i, doc := range bytes.Split(readRepo(t, rel), []byte("\n---\n")) {
		var d map[string]any
		if err := yaml.Unmarshal(doc, &d); err != nil {
			t.Fatalf("%s: document %d: %v", rel, i+1, err)
		}
		if d["kind"] != "Secret" {
			continue
		}
		env := map[string]string{}
		for _, line := range strings.Split(string(doc), "\n") {
			if m := secretLine.FindStringSubmatch(line); m != nil {
				env[m[1]] = operatorValue(m[1], m[2])
			}
		}
		out[str(path(d, "metadata", "name"))] = env
	}
	return out
}
