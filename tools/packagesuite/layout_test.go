// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// entry is one path a package installs as a user sees it: ls-style mode, owner and group, and
// whether the package manager keeps a changed copy on upgrade.
type entry struct {
	mode, owner, group string
	conf               bool
	only               string // "deb" or "rpm" when one format alone ships it
}

// layout is what each package installs besides the parents of these paths (root's, 0755).
func layout(name string) map[string]entry {
	file := entry{mode: "-rw-r--r--", owner: "root", group: "root"}
	doc := "/usr/share/doc/" + name + "/"
	debOnly := file
	debOnly.only = "deb"
	l := map[string]entry{
		"/usr/bin/" + name:                         {mode: "-rwxr-xr-x", owner: "root", group: "root"},
		"/usr/share/man/man1/" + name + ".1.gz":    file,
		"/etc/muster":                              {mode: "drwxr-xr-x", owner: "root", group: "root"},
		doc + "changelog.Debian.gz":                debOnly,
		doc + "copyright":                          debOnly,
		"/usr/share/lintian/overrides/" + name:     debOnly,
		"/usr/share/licenses/" + name + "/LICENSE": {mode: "-rw-r--r--", owner: "root", group: "root", only: "rpm"},
	}
	secret := entry{mode: "-rw-------", owner: "root", group: "root", conf: true}
	config := entry{mode: "-rw-r--r--", owner: "root", group: "root", conf: true}
	switch name {
	case "muster-coordinator":
		l["/usr/lib/systemd/system/muster-coordinator.service"] = file
		l["/etc/muster/coordinator.yaml"] = config
		l["/etc/muster/coordinator.env"] = secret
		l["/etc/muster/tls"] = entry{mode: "drwxr-x---", owner: "root", group: "muster"}
		l["/var/lib/muster-coordinator"] = entry{mode: "drwx------", owner: "muster", group: "muster"}
		for _, d := range []string{"cluster.md", "configure.md", "failover.md", "metrics.md"} {
			l[doc+d] = file
		}
	case "muster-edge":
		l["/usr/lib/systemd/system/muster-edge@.service"] = file
		l["/etc/muster/edge-eu.yaml"] = config
		l["/etc/muster/edge-eu.env"] = secret
		l["/etc/muster/edge"] = entry{mode: "drwxr-x---", owner: "root", group: "muster"}
		for _, d := range []string{"install.md", "configure.md", "helper.md", "upgrades.md", "migrating.md", "metrics.md"} {
			l[doc+d] = file
		}
	}
	return l
}

// installed is one path as a package lists it.
type installed struct {
	path, mode, owner, group, flags string
}

// compare checks a package's listing against layout: every path there with its mode and owner,
// nothing world-writable, and nothing else but root's 0755 parent directories.
func compare(t *testing.T, name, format string, got []installed) {
	t.Helper()
	want := layout(name)
	seen := map[string]bool{}
	for _, g := range got {
		if len(g.mode) == 10 && g.mode[8] == 'w' {
			t.Errorf("%s %s: %s is world-writable (%s)", name, format, g.path, g.mode)
		}
		w, ok := want[g.path]
		switch {
		case ok && w.only != "" && w.only != format:
			t.Errorf("%s %s ships %s, which only the %s should", name, format, g.path, w.only)
		case ok:
			seen[g.path] = true
			if g.mode != w.mode || g.owner != w.owner || g.group != w.group {
				t.Errorf("%s %s: %s is %s %s:%s, want %s %s:%s", name, format, g.path, g.mode, g.owner, g.group, w.mode, w.owner, w.group)
			}
		case g.mode == "drwxr-xr-x" && g.owner == "root" && g.group == "root" && parentOfAny(g.path, want):
		default:
			t.Errorf("%s %s ships %s (%s %s:%s), which is not in the expected layout", name, format, g.path, g.mode, g.owner, g.group)
		}
	}
	for p, w := range want {
		if !seen[p] && (w.only == "" || w.only == format) {
			t.Errorf("%s %s lacks %s", name, format, p)
		}
	}
}

func parentOfAny(dir string, want map[string]entry) bool {
	for p := range want {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// checkDebLayout reads dpkg-deb --contents and the conffiles control file of each .deb.
func checkDebLayout(t *testing.T, b built) {
	for _, name := range packageNames() {
		deb := b.pkg(t, name, "deb").path
		out := run(t, "dpkg-deb", "--contents", deb)
		var got []installed
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			// drwxr-x--- root/muster 0 2026-12-01 22:38 ./etc/muster/tls/
			f := strings.Fields(line)
			if len(f) < 6 {
				t.Fatalf("dpkg-deb --contents line %q", line)
			}
			owner, group, _ := strings.Cut(f[1], "/")
			if owner == "0" {
				owner = "root" // nfpm writes its changelog with numeric ids only
			}
			if group == "0" {
				group = "root"
			}
			p := strings.TrimSuffix(strings.TrimPrefix(f[5], "."), "/")
			if p == "" {
				continue
			}
			got = append(got, installed{path: p, mode: f[0], owner: owner, group: group})
		}
		compare(t, name, "deb", got)
		conffiles := strings.Fields(run(t, "dpkg-deb", "--info", deb, "conffiles"))
		var want []string
		for p, e := range layout(name) {
			if e.conf {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		slices.Sort(conffiles)
		if !slices.Equal(conffiles, want) {
			t.Errorf("%s conffiles %v, want %v", name, conffiles, want)
		}
	}
}

// checkRpmLayout reads rpm's file list with modes, owners and flags (c config, n noreplace, d
// documentation, l license), and that rpm -qpl --scripts shows the files and the scriptlets.
func checkRpmLayout(t *testing.T, b built) {
	for _, name := range packageNames() {
		rpm := b.pkg(t, name, "rpm").path
		out := run(t, "rpm", "-qp", "--qf", `[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} |%{FILEFLAGS:fflags}| %{FILENAMES}\n]`, rpm)
		var got []installed
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) != 5 {
				t.Fatalf("rpm file line %q", line)
			}
			got = append(got, installed{path: f[4], mode: f[0], owner: f[1], group: f[2], flags: strings.Trim(f[3], "|")})
		}
		compare(t, name, "rpm", got)
		want := layout(name)
		for _, g := range got {
			w := want[g.path]
			switch {
			case w.conf && g.flags != "cn":
				t.Errorf("%s rpm: %s has flags %q, want config(noreplace) \"cn\"", name, g.path, g.flags)
			case !w.conf && strings.Contains(g.flags, "c"):
				t.Errorf("%s rpm: %s is marked configuration (%q)", name, g.path, g.flags)
			case strings.HasPrefix(g.path, "/usr/share/doc/") || strings.HasPrefix(g.path, "/usr/share/man/"):
				if g.flags != "d" {
					t.Errorf("%s rpm: %s has flags %q, want documentation \"d\"", name, g.path, g.flags)
				}
			}
		}
		listing := run(t, "rpm", "-qpl", "--scripts", rpm)
		for _, s := range []string{"preinstall scriptlet (using /bin/sh):", "postinstall scriptlet (using /bin/sh):",
			"preuninstall scriptlet (using /bin/sh):", "postuninstall scriptlet (using /bin/sh):", "/usr/bin/" + name} {
			if !strings.Contains(listing, s) {
				t.Errorf("%s: rpm -qpl --scripts does not show %q:\n%s", name, s, listing)
			}
		}
	}
}

// run runs a command and returns its standard output, failing the test with both outputs.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}
