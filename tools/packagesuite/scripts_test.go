// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scriptNames maps the deb's maintainer scripts to rpm's scriptlet headers.
func scriptNames() map[string]string {
	return map[string]string{"preinst": "preinstall", "postinst": "postinstall", "prerm": "preuninstall", "postrm": "postuninstall"}
}

// debScripts are a .deb's maintainer scripts by name.
func debScripts(t *testing.T, deb string) map[string]string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "DEBIAN")
	run(t, "dpkg-deb", "-e", deb, dir)
	out := map[string]string{}
	for name := range scriptNames() {
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", deb, err)
		}
		out[name] = string(body)
	}
	return out
}

// scriptletHeader starts each scriptlet in rpm --scripts.
var scriptletHeader = regexp.MustCompile(`(?m)^(\w+) scriptlet \(using /bin/sh\):\n`)

// checkRpmScripts checks that the rpm's scriptlets are the deb's maintainer scripts (one set,
// reading either convention's arguments) and that none deletes anything or touches enablement.
func checkRpmScripts(t *testing.T, b built) {
	for _, name := range packageNames() {
		deb := debScripts(t, b.pkg(t, name, "deb").path)
		out := run(t, "rpm", "-qp", "--scripts", b.pkg(t, name, "rpm").path)
		rpm := map[string]string{}
		idx := scriptletHeader.FindAllStringSubmatchIndex(out, -1)
		for i, m := range idx {
			end := len(out)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			rpm[out[m[2]:m[3]]] = out[m[1]:end]
		}
		for debName, rpmName := range scriptNames() {
			if strings.TrimSpace(deb[debName]) != strings.TrimSpace(rpm[rpmName]) {
				t.Errorf("%s: rpm %s differs from deb %s:\n%s\n----\n%s", name, rpmName, debName, rpm[rpmName], deb[debName])
			}
			for _, forbidden := range []string{"rm ", "userdel", "groupdel", "systemctl enable", "systemctl start", "systemctl disable"} {
				if strings.Contains(uncommented(deb[debName]), forbidden) {
					t.Errorf("%s %s runs %q", name, debName, forbidden)
				}
			}
		}
	}
}

func uncommented(script string) string {
	var b strings.Builder
	for _, l := range strings.Split(script, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// shims are stand-ins for the user tools the scripts call, over files in their directory: a
// passwd and group database and a log of every call. Any other command is not found.
func shims(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tools := map[string]string{
		"getent": `echo "getent $*" >> "$SHIMS/log"; grep -q "^$2:" "$SHIMS/$1"`,
		"groupadd": `echo "groupadd $*" >> "$SHIMS/log"; for a; do n=$a; done
if grep -q "^$n:" "$SHIMS/group"; then exit 9; fi; echo "$n:x:999:" >> "$SHIMS/group"`,
		"useradd": `echo "useradd $*" >> "$SHIMS/log"; for a; do n=$a; done
if grep -q "^$n:" "$SHIMS/passwd"; then exit 9; fi; echo "$n:x:999:999::/nonexistent:/usr/sbin/nologin" >> "$SHIMS/passwd"`,
		"systemctl": `echo "systemctl $*" >> "$SHIMS/log"`,
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range tools {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!"+sh+"\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(grep, filepath.Join(dir, "grep")); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{"passwd", "group", "log"} {
		if err := os.WriteFile(filepath.Join(dir, db), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runScript runs one maintainer script with only the shims on PATH and returns the calls it made.
func runScript(t *testing.T, dir, script string, args ...string) []string {
	t.Helper()
	before, _ := os.ReadFile(filepath.Join(dir, "log"))
	f := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(f, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", append([]string{f}, args...)...)
	cmd.Env = []string{"PATH=" + dir, "SHIMS=" + dir}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script %v: %v\n%s", args, err, out)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "log"))
	var calls []string
	for _, l := range strings.Split(strings.TrimSpace(string(after[len(before):])), "\n") {
		if l != "" && !strings.HasPrefix(l, "getent ") {
			calls = append(calls, l)
		}
	}
	return calls
}

// checkScripts runs the maintainer scripts as dpkg and rpm call them, against the shims: the
// first install creates the system group and user, every later run and the other package find
// them, and removal and purge call nothing but systemctl (and that only where systemd runs).
func checkScripts(t *testing.T, b built) {
	dir := shims(t)
	systemd := false
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		systemd = true // the scripts tell a running systemd; here the shim records it
	}
	for i, name := range packageNames() {
		s := debScripts(t, b.pkg(t, name, "deb").path)
		calls := runScript(t, dir, s["preinst"], "install")
		if i == 0 {
			want := []string{"groupadd --system muster",
				"useradd --system --gid muster --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin --comment Muster provisioner muster"}
			if strings.Join(calls, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s preinst install: calls\n%s\nwant\n%s", name, strings.Join(calls, "\n"), strings.Join(want, "\n"))
			}
		} else if len(calls) > 0 {
			t.Errorf("%s preinst install with muster present: %v, want no call", name, calls)
		}
		for _, args := range [][]string{{"upgrade", "0.9-1"}, {"1"}, {"2"}} {
			if calls := runScript(t, dir, s["preinst"], args...); len(calls) > 0 {
				t.Errorf("%s preinst %v: %v, want no call (muster exists)", name, args, calls)
			}
		}
		for _, c := range []struct {
			script string
			args   []string
		}{
			{"postinst", []string{"configure", ""}}, {"postinst", []string{"configure", "0.9-1"}}, {"postinst", []string{"2"}},
			{"prerm", []string{"upgrade", "1.0-1"}}, {"prerm", []string{"remove"}}, {"prerm", []string{"0"}},
			{"postrm", []string{"remove"}}, {"postrm", []string{"purge"}}, {"postrm", []string{"0"}},
		} {
			calls := runScript(t, dir, s[c.script], c.args...)
			for _, call := range calls {
				if !strings.HasPrefix(call, "systemctl ") {
					t.Errorf("%s %s %v called %q", name, c.script, c.args, call)
				}
			}
			if !systemd && len(calls) > 0 {
				t.Errorf("%s %s %v called %v without a running systemd", name, c.script, c.args, calls)
			}
		}
	}
	passwd, _ := os.ReadFile(filepath.Join(dir, "passwd"))
	if n := strings.Count(string(passwd), "muster:"); n != 1 {
		t.Errorf("passwd has %d muster users after both packages' scripts:\n%s", n, passwd)
	}
}
