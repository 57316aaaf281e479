// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// keptLintian are the lintian warnings the packages keep, each explained in
// sandbox/packaging/README.md; the intended ones are overridden inside the packages.
func keptLintian() map[string]bool {
	return map[string]bool{"initial-upload-closes-no-bugs": true}
}

// keptRpmlint are the rpmlint warnings the packages keep, each explained in
// sandbox/packaging/README.md; the intended errors are filtered by sandbox/packaging/rpmlint.toml.
func keptRpmlint() map[string]bool {
	return map[string]bool{
		"only-non-binary-in-usr-lib": true, // the systemd unit, which must be in /usr/lib
		"non-standard-uid":           true, // muster owns /var/lib/muster-coordinator
		"non-standard-gid":           true, // and the muster group can read /etc/muster/tls, /etc/muster/edge
		"no-manual-page-for-binary":  true, // rpmlint 2.4 compares binaries with man sections
	}
}

// lintianLine is "E: muster-edge: tag [context]"; I (information) and O (overridden) are not
// findings.
var lintianLine = regexp.MustCompile(`^([EWPX]): (\S+): (\S+)`)

// checkLintian runs lintian with pedantic tags on both .debs.
func checkLintian(t *testing.T, b built) {
	args := []string{"--pedantic", "--no-tag-display-limit"}
	for _, name := range packageNames() {
		args = append(args, b.pkg(t, name, "deb").path)
	}
	out, err := exec.Command("lintian", args...).Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("lintian: %v", err)
	}
	t.Logf("lintian:\n%s", out)
	findings := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		m := lintianLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		findings++
		if m[1] == "W" && keptLintian()[m[3]] {
			continue
		}
		t.Errorf("lintian: %s", sc.Text())
	}
	if err != nil && findings == 0 {
		t.Errorf("lintian failed without a finding: %v\n%s", err, exit.Stderr)
	}
}

// rpmlintLine is "muster-edge.x86_64: W: tag arguments".
var rpmlintLine = regexp.MustCompile(`^(\S+)\.\S+: ([EW]): (\S+)`)

// checkRpmlint runs rpmlint with sandbox/packaging/rpmlint.toml on both .rpms. rpmlint unpacks
// with rpm2cpio | cpio -id, and nfpm's payload names are absolute (goreleaser/nfpm#1122): GNU
// cpio would write them into /, so rpmlint gets a cpio that strips the leading slash.
func checkRpmlint(t *testing.T, b built) {
	realCpio, err := exec.LookPath("cpio")
	if err != nil {
		t.Fatal(err)
	}
	wrap := t.TempDir()
	script := "#!/bin/sh\nexec " + realCpio + " --no-absolute-filenames \"$@\"\n"
	if err := os.WriteFile(filepath.Join(wrap, "cpio"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// Anything rpmlint unpacked into / despite the wrapper is found and named.
	absent := map[string]bool{}
	for _, name := range packageNames() {
		for p := range layout(name) {
			if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
				absent[p] = true
			}
		}
	}
	args := []string{"-c", filepath.Join(b.root, "sandbox", "packaging", "rpmlint.toml")}
	for _, name := range packageNames() {
		args = append(args, b.pkg(t, name, "rpm").path)
	}
	cmd := exec.Command("rpmlint", args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+wrap+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("rpmlint:\n%s", out)
	for p := range absent {
		if _, serr := os.Lstat(p); serr == nil {
			t.Errorf("rpmlint unpacked %s into the machine's root", p)
		}
	}
	findings := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		m := rpmlintLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		findings++
		if m[2] == "W" && keptRpmlint()[m[3]] {
			continue
		}
		t.Errorf("rpmlint: %s", sc.Text())
	}
	if !strings.Contains(string(out), "0 errors") {
		t.Errorf("rpmlint did not report 0 errors (%d findings, %v)", findings, err)
	}
}
