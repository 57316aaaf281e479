// SPDX-License-Identifier: Apache-2.0

// Package version says which build a Muster binary is, from the build information Go stamps in
// it: the same string its deb and rpm packages carry (tools/packaging).
package version

import (
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// pseudoVersion matches the end of a Go pseudo-version: -yyyymmddhhmmss-abcdefabcdef[+dirty].
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}(\+dirty)?$`)

// Upstream is the version info carries: its main module's version when it is a release (v1.2.0
// is 1.2.0, v1.3.0-rc.1 is 1.3.0~rc.1), else 0.0.0~git<commit time>.<8 hex of the commit>, with
// +dirty for a tree with uncommitted changes; "" when it records neither. Deb's upstream version
// and rpm's Version both take it as it is.
func Upstream(info *debug.BuildInfo) string {
	if info == nil {
		return ""
	}
	if isRelease(info.Main.Version) {
		return fromModuleVersion(info.Main.Version)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	at, err := time.Parse(time.RFC3339, settings["vcs.time"])
	if len(rev) < 8 || err != nil {
		return ""
	}
	// 8 hex digits after the commit time keep a .deb's name within lintian's 80 characters.
	v := "0.0.0~git" + at.UTC().Format("20060102150405") + "." + rev[:8]
	if settings["vcs.modified"] == "true" {
		v += "+dirty"
	}
	return v
}

// String is this program's version for --version; "unknown" when it was built without version
// control information (outside a git checkout, or with -buildvcs=false).
func String() string {
	info, _ := debug.ReadBuildInfo()
	if v := Upstream(info); v != "" {
		return v
	}
	return "unknown"
}

// isRelease reports whether a module version names a release or pre-release, not a checkout.
func isRelease(v string) bool {
	if v == "" || v == "(devel)" || !strings.HasPrefix(v, "v") {
		return false
	}
	return !pseudoVersion.MatchString(v)
}

// fromModuleVersion maps v1.2.0 to 1.2.0 and v1.3.0-rc.1 to 1.3.0~rc.1: deb and rpm both sort a
// tilde before the release it precedes, as semver sorts a pre-release.
func fromModuleVersion(v string) string {
	v = strings.TrimPrefix(v, "v")
	core, meta, _ := strings.Cut(v, "+")
	core = strings.Replace(core, "-", "~", 1)
	core = strings.ReplaceAll(core, "-", ".")
	if meta != "" {
		return core + "+" + meta
	}
	return core
}
