// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// extracted is a binary taken out of a package.
type extracted struct {
	bin string
	a   artifact
}

// devVersion is the commit part of a version between releases: ~git<commit time>.<8 hex>.
var devVersion = regexp.MustCompile(`~git\d{14}\.([0-9a-f]{8})`)

// checkBinaries runs each binary taken out of each package and reads the build it carries.
func checkBinaries(t *testing.T, b built) {
	var versions []extracted
	for _, name := range packageNames() {
		var bodies [][]byte
		for _, format := range formats() {
			a := b.pkg(t, name, format)
			bin := filepath.Join(extract(t, a.path, format), "usr", "bin", name)
			body, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, body)
			out, err := exec.Command(bin, "--help").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Usage:") {
				t.Errorf("%s from the %s: --help: %v\n%s", name, format, err, out)
			}
			info, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatalf("%s from the %s: %v", name, format, err)
			}
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			if settings["CGO_ENABLED"] != "0" || settings["-buildmode"] != "pie" || settings["-trimpath"] != "true" {
				t.Errorf("%s from the %s built with CGO_ENABLED=%s -buildmode=%s -trimpath=%s, want 0, pie, true",
					name, format, settings["CGO_ENABLED"], settings["-buildmode"], settings["-trimpath"])
			}
			// Between releases the version names the commit the binary says it was built from.
			if m := devVersion.FindStringSubmatch(a.upstream); m != nil &&
				!strings.HasPrefix(settings["vcs.revision"], m[1]) {
				t.Errorf("%s %s version %s, but the binary was built from %s", name, format, a.full, settings["vcs.revision"])
			}
			versions = append(versions, extracted{bin, a})
		}
		if !bytes.Equal(bodies[0], bodies[1]) {
			t.Errorf("%s: the deb and the rpm ship different binaries", name)
		}
	}
	t.Run("VersionFlagPrintsThePackageVersion", func(t *testing.T) {
		for _, v := range versions {
			out, err := exec.Command(v.bin, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s from the %s: --version: %v\n%s", v.a.name, v.a.format, err, out)
			}
			if v.a.upstream == "0.0.0~test" {
				// Packaged with a version of the suite's (the checkout records no commit): the
				// binary can only say what its build info holds.
				continue
			}
			if !strings.Contains(string(out), v.a.upstream) {
				t.Errorf("%s from the %s: --version printed %q, want %s", v.a.name, v.a.format, out, v.a.upstream)
			}
		}
	})
}

// documentation is a unit's Documentation= line naming a local file.
var documentation = regexp.MustCompile(`(?m)^Documentation=file://(\S+)$`)

// checkUnits runs systemd-analyze verify on each packaged unit with its ExecStart pointed at the
// packaged binary (the container's root has no systemd units for --root), and checks what the
// unit names agrees with the package: its documentation, its user, its state directory's mode;
// and that man finds the package's man page and renders it without a warning.
func checkUnits(t *testing.T, b built) {
	units := map[string]struct{ file, instance string }{
		"muster-coordinator": {"muster-coordinator.service", "muster-coordinator.service"},
		"muster-edge":        {"muster-edge@.service", "muster-edge@eu.service"},
	}
	for _, name := range packageNames() {
		u := units[name]
		deb := extract(t, b.pkg(t, name, "deb").path, "deb")
		rpm := extract(t, b.pkg(t, name, "rpm").path, "rpm")
		rel := filepath.Join("usr", "lib", "systemd", "system", u.file)
		body, err := os.ReadFile(filepath.Join(deb, rel))
		if err != nil {
			t.Fatal(err)
		}
		if other, err := os.ReadFile(filepath.Join(rpm, rel)); err != nil || !bytes.Equal(body, other) {
			t.Errorf("%s: the rpm's %s differs from the deb's (%v)", name, u.file, err)
		}
		for _, want := range []string{"\nUser=muster\n", "\nStateDirectoryMode=0700\n"} {
			if !strings.Contains(string(body), want) {
				t.Errorf("%s: %s lacks %q", name, u.file, strings.TrimSpace(want))
			}
		}
		// The page the unit's Documentation= names is one the package installs.
		if m := documentation.FindStringSubmatch(string(body)); m == nil {
			t.Errorf("%s: %s names no file:// documentation", name, u.file)
		} else if _, err := os.Stat(filepath.Join(deb, m[1])); err != nil {
			t.Errorf("%s: %s's Documentation=%s is not in the package: %v", name, u.file, m[1], err)
		}
		bin := filepath.Join(deb, "usr", "bin", name)
		local := filepath.Join(t.TempDir(), u.instance)
		if err := os.WriteFile(local, []byte(strings.ReplaceAll(string(body), "/usr/bin/"+name, bin)), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("systemd-analyze", "verify", local).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u.file, err, out)
		}
		man := exec.Command("man", "-w", name)
		man.Env = append(os.Environ(), "MANPATH="+filepath.Join(deb, "usr", "share", "man"))
		if out, err := man.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), deb) {
			t.Errorf("man -w %s in the package: %v\n%s", name, err, out)
		}
		page := exec.Command("man", "--warnings", "-l", filepath.Join(deb, "usr", "share", "man", "man1", name+".1.gz"))
		page.Env = append(os.Environ(), "MANWIDTH=80")
		var stderr bytes.Buffer
		page.Stderr = &stderr
		if out, err := page.Output(); err != nil || stderr.Len() > 0 || !bytes.Contains(out, []byte("SYNOPSIS")) {
			t.Errorf("man %s: %v\n%s", name, err, stderr.String())
		}
	}
}
