// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDockerfile_BuildsWhatTheManifestsRun: every path the Dockerfile copies from the repository
// exists, every package it builds is a command of its module, and every binary the manifests and
// units start is one it builds.
func TestDockerfile_BuildsWhatTheManifestsRun(t *testing.T) {
	df := string(readRepo(t, "deploy/Dockerfile"))
	if n := strings.Count(df, "\nFROM "); n < 1 || !strings.HasPrefix(strings.TrimLeft(stripComments(df), "\n"), "FROM ") {
		t.Fatalf("deploy/Dockerfile is not a multi-stage build")
	}
	if !strings.Contains(df, "COPY --from=build") {
		t.Error("the runtime stage copies nothing from the build stage")
	}
	for _, m := range regexp.MustCompile(`(?m)^COPY ([^-\n][^\n]*)$`).FindAllStringSubmatch(df, -1) {
		parts := strings.Fields(m[1])
		for _, src := range parts[:len(parts)-1] {
			if _, err := os.Stat(filepath.Join(root, src)); err != nil {
				t.Errorf("COPY %s: %v", src, err)
			}
		}
	}
	var built []string
	for _, m := range regexp.MustCompile(`cd /src/(\w+) && go build [^\n]*?-o /out/ ([^\n\\&]+)`).FindAllStringSubmatch(df, -1) {
		for _, pkg := range strings.Fields(m[2]) {
			dir := filepath.Join(root, m[1], pkg)
			if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
				t.Errorf("go build %s in %s: no main package there", pkg, m[1])
			}
			built = append(built, filepath.Base(pkg))
		}
	}
	for _, want := range []string{"muster-coordinator", "muster-edge", "muster-helper-sample"} {
		if !slices.Contains(built, want) {
			t.Errorf("the Dockerfile does not build %s (builds %v)", want, built)
		}
	}
	// The binaries the manifests start.
	for _, rel := range []string{"deploy/kubernetes/coordinator.yaml", "deploy/kubernetes/edge-eu.yaml"} {
		body := string(readRepo(t, rel))
		for _, bin := range regexp.MustCompile(`muster-(?:coordinator|edge) (?:serve|run)`).FindAllString(body, -1) {
			if !slices.Contains(built, strings.Fields(bin)[0]) {
				t.Errorf("%s runs %s, which the image does not hold", rel, bin)
			}
		}
	}
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
