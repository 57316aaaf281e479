// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// keptLintian are the lintian warnings the packages keep, each explained in
// tools/packaging/README.md; the intended ones are overridden inside the packages.
func keptLintian() map[string]bool {
	return map[string]bool{"initial-upload-closes-no-bugs": true}
}

// keptRpmlint are the rpmlint warnings the packages keep, each explained in
// tools/packaging/README.md; the intended errors are filtered by tools/packaging/rpmlint.toml.
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
var lintianLine = regexp.MustCompile(`^(?P<severity>[EWPX]): (\S+): (?P<tag>\S+)`)

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
	findings := reportFindings(t, "lintian", out, lintianLine, keptLintian())
	if err != nil && findings == 0 {
		t.Errorf("lintian failed without a finding: %v\n%s", err, exit.Stderr)
	}
}

// rpmlintLine is "muster-edge.x86_64: W: tag arguments".
var rpmlintLine = regexp.MustCompile(`^(\S+)\.\S+: (?P<severity>[EW]): (?P<tag>\S+)`)

// checkRpmlint runs rpmlint with tools/packaging/rpmlint.toml on both .rpms. rpmlint unpacks
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
	args := []string{"-c", filepath.Join(b.root, "tools", "packaging", "rpmlint.toml")}
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
	findings := reportFindings(t, "rpmlint", out, rpmlintLine, keptRpmlint())
	if !strings.Contains(string(out), "0 errors") {
		t.Errorf("rpmlint did not report 0 errors (%d findings, %v)", findings, err)
	}
}

// reportFindings fails the test on every line of tool's output that line matches, except a
// warning (severity W) whose tag is kept, and returns how many lines matched.
func reportFindings(t *testing.T, tool string, out []byte, line *regexp.Regexp, kept map[string]bool) int {
	t.Helper()
	severity, tag := line.SubexpIndex("severity"), line.SubexpIndex("tag")
	findings := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		findings++
		if m[severity] == "W" && kept[m[tag]] {
			continue
		}
		t.Errorf("%s: %s", tool, sc.Text())
	}
	return findings
}

// reportFindings reads each linter's lines by its pattern: the lines it matches count, and a
// kept warning is no failure (any other matched line would fail this test).
func TestReportFindings_CountsMatchedLinesAndPassesKeptWarnings(t *testing.T) {
	lintian := "W: muster-edge: initial-upload-closes-no-bugs\nI: muster-edge: an-information-tag\nN: a note\n"
	if n := reportFindings(t, "lintian", []byte(lintian), lintianLine, keptLintian()); n != 1 {
		t.Errorf("lintian: %d findings, want 1", n)
	}
	rpmlint := "muster-coordinator.x86_64: W: non-standard-uid /var/lib/muster-coordinator muster\n" +
		"2 packages and 0 specfiles checked; 0 errors, 1 warnings, 0 badness; has taken 0.3 s\n"
	if n := reportFindings(t, "rpmlint", []byte(rpmlint), rpmlintLine, keptRpmlint()); n != 1 {
		t.Errorf("rpmlint: %d findings, want 1", n)
	}
}
