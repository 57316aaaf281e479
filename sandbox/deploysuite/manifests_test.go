// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestManifests_ParseAndHoldTogether: every manifest parses; the coordinators are a StatefulSet
// behind a headless service with persistent volumes mounted at data_dir and a disruption budget
// that keeps a quorum; every selector matches its pods; every edge is a Deployment whose edge
// name the coordinators bind to its region; everything lives in the namespace.
func TestManifests_ParseAndHoldTogether(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "deploy", "kubernetes", "*.yaml"))
	var all []map[string]any
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		for i, d := range yamlDocs(t, rel) {
			if str(d["apiVersion"]) == "" || str(d["kind"]) == "" || str(path(d, "metadata", "name")) == "" {
				t.Errorf("%s document %d lacks apiVersion, kind or metadata.name", rel, i+1)
			}
			if d["kind"] != "Namespace" && str(path(d, "metadata", "namespace")) != "muster" {
				t.Errorf("%s: %s %s is not in namespace muster", rel, d["kind"], path(d, "metadata", "name"))
			}
			all = append(all, d)
		}
	}
	find := func(kind, name string) map[string]any {
		for _, d := range all {
			if d["kind"] == kind && str(path(d, "metadata", "name")) == name {
				return d
			}
		}
		t.Fatalf("no %s %s in deploy/kubernetes", kind, name)
		return nil
	}

	sts := find("StatefulSet", "muster-coordinator")
	replicas, _ := path(sts, "spec", "replicas").(int)
	if replicas < 3 || replicas%2 == 0 {
		t.Errorf("coordinator replicas %d: want an odd number, at least 3", replicas)
	}
	podLabels := path(sts, "spec", "template", "metadata", "labels")
	if !reflect.DeepEqual(path(sts, "spec", "selector", "matchLabels"), podLabels) {
		t.Errorf("StatefulSet selector %v does not match its pod labels %v", path(sts, "spec", "selector", "matchLabels"), podLabels)
	}
	headless := find("Service", str(path(sts, "spec", "serviceName")))
	if path(headless, "spec", "clusterIP") != "None" || path(headless, "spec", "publishNotReadyAddresses") != true {
		t.Errorf("service %s: want clusterIP None and publishNotReadyAddresses (members reach each other before they are ready)", path(sts, "spec", "serviceName"))
	}
	if !reflect.DeepEqual(path(headless, "spec", "selector"), podLabels) {
		t.Errorf("headless service selects %v, pods are %v", path(headless, "spec", "selector"), podLabels)
	}
	claim := str(path(sts, "spec", "volumeClaimTemplates", 0, "metadata", "name"))
	ctr := path(sts, "spec", "template", "spec", "containers", 0)
	var dataMount string
	for _, m := range list(path(ctr, "volumeMounts")) {
		if str(path(m, "name")) == claim {
			dataMount = str(path(m, "mountPath"))
		}
	}
	cm := find("ConfigMap", "muster-coordinator")
	if dataMount == "" || !strings.Contains(str(path(cm, "data", "config.yaml")), "data_dir: "+dataMount+"\n") {
		t.Errorf("the persistent volume %q is mounted at %q, which is not the configuration's data_dir", claim, dataMount)
	}
	pdb := find("PodDisruptionBudget", "muster-coordinator")
	if minAvail, _ := path(pdb, "spec", "minAvailable").(int); minAvail != replicas/2+1 {
		t.Errorf("PodDisruptionBudget minAvailable %v: want a quorum of %d, %d", path(pdb, "spec", "minAvailable"), replicas, replicas/2+1)
	}
	if !reflect.DeepEqual(path(pdb, "spec", "selector", "matchLabels"), podLabels) {
		t.Errorf("PodDisruptionBudget selects %v, pods are %v", path(pdb, "spec", "selector", "matchLabels"), podLabels)
	}
	for _, name := range []string{"raft", "api"} {
		if !slices.ContainsFunc(list(path(headless, "spec", "ports")), func(p any) bool { return path(p, "name") == name }) {
			t.Errorf("headless service lacks port %s", name)
		}
	}

	var bound []string
	for _, e := range list(path(yamlMap(t, str(path(cm, "data", "config.yaml"))), "auth", "edges")) {
		bound = append(bound, fmt.Sprint(e))
	}
	var deployments int
	for _, d := range all {
		if d["kind"] != "Deployment" {
			continue
		}
		deployments++
		name := str(path(d, "metadata", "name"))
		if !reflect.DeepEqual(path(d, "spec", "selector", "matchLabels"), path(d, "spec", "template", "metadata", "labels")) {
			t.Errorf("Deployment %s: selector does not match its pod labels", name)
		}
		cfg := yamlMap(t, str(path(find("ConfigMap", name), "data", "edge.yaml")))
		cred := fmt.Sprintf("%s@%s", path(cfg, "edge_name"), path(cfg, "region"))
		if !slices.Contains(bound, cred) {
			t.Errorf("Deployment %s: edge %s is not bound in the coordinators' auth.edges %v", name, cred, bound)
		}
	}
	if deployments < 2 {
		t.Errorf("%d edge Deployments: want one per region, at least 2", deployments)
	}
}
