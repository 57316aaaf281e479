// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild_FailpointOnlyWithItsTag lists the coordinator package's files as `make build`
// compiles them (no tag) and as the chaos runner does: the clock-step failpoint is in the
// second only.
func TestBuild_FailpointOnlyWithItsTag(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := RepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	files := func(tags string) string {
		args := []string{"list", "-f", "{{.GoFiles}}"}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		cmd := exec.Command("go", append(args, ".")...)
		cmd.Dir = filepath.Join(root, "coordinator")
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GONOSUMDB=github.com/choria-io")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	release, chaos := files(""), files(FailpointsTag)
	if strings.Contains(release, "failpoint_on.go") || !strings.Contains(release, "failpoint_off.go") {
		t.Errorf("release build of the coordinator compiles %s", release)
	}
	if !strings.Contains(chaos, "failpoint_on.go") || strings.Contains(chaos, "failpoint_off.go") {
		t.Errorf("failpoints build of the coordinator compiles %s", chaos)
	}
}
