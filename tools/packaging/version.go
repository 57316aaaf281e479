// SPDX-License-Identifier: Apache-2.0

package packaging

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/seed96588659/muster/pkg/version"
)

// Release is the packaging revision of every version: deb's -1, rpm's Release 1.
const Release = "1"

// Version is the version of one package and the build it was read from.
type Version struct {
	Upstream string    // deb upstream version, rpm Version: 1.2.0, 0.0.0~git20261201222503.53b45d06
	Revision string    // the commit the binary was built from (vcs.revision)
	Time     time.Time // that commit's time (vcs.time): every file's modification time
	Modified bool      // built from a tree with uncommitted changes (vcs.modified)
	Arch     string    // GOARCH of the binary
}

// Full is the version with the packaging revision: what dpkg -I and rpm -qpi show.
func (v Version) Full() string { return v.Upstream + "-" + Release }

// upstreamChars is what deb's upstream version and rpm's Version both accept, without a hyphen
// (rpm refuses it, deb reads it as the start of the revision).
var upstreamChars = regexp.MustCompile(`^[0-9][0-9A-Za-z.+~]*$`)

// ReadVersion reads the version stamped into a Go binary's build info: the main module's version
// when it is a release (v1.2.0), else 0.0.0~git<commit time>.<8 hex of the commit>, with +dirty
// for a tree with uncommitted changes. The binary must be built as make packages builds it:
// CGO_ENABLED=0 (no libc: one binary for Debian 12 and el9, whose glibc is older) and
// -buildmode=pie (as RHEL builds Go; lintian takes a PIE that links no library, where it refuses
// a static binary). override, when set, replaces the upstream version.
func ReadVersion(binary, override string) (Version, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return Version{}, fmt.Errorf("read build info of %s: %w", binary, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != "linux" {
		return Version{}, fmt.Errorf("%s is built for GOOS %q, not linux", binary, settings["GOOS"])
	}
	if settings["CGO_ENABLED"] != "0" || settings["-buildmode"] != "pie" {
		return Version{}, fmt.Errorf("%s is built with CGO_ENABLED=%s -buildmode=%s: packages ship CGO_ENABLED=0 -buildmode=pie builds (make packages)", binary, settings["CGO_ENABLED"], settings["-buildmode"])
	}
	v := Version{Revision: settings["vcs.revision"], Modified: settings["vcs.modified"] == "true", Arch: settings["GOARCH"]}
	if t := settings["vcs.time"]; t != "" {
		if v.Time, err = time.Parse(time.RFC3339, t); err != nil {
			return Version{}, fmt.Errorf("%s: vcs.time %q: %w", binary, t, err)
		}
	}
	switch {
	case override != "":
		v.Upstream = override
	default:
		// The binary's own --version reads the same (pkg/version).
		if v.Upstream = version.Upstream(info); v.Upstream == "" {
			return Version{}, fmt.Errorf("%s carries no version and no commit (built outside a git checkout or with -buildvcs=false): pass a version (make packages VERSION=1.2.0)", binary)
		}
	}
	if !upstreamChars.MatchString(v.Upstream) {
		return Version{}, fmt.Errorf("version %q: a package version starts with a digit and holds only letters, digits and . + ~", v.Upstream)
	}
	if v.Time.IsZero() {
		// Without a commit time the files get the binary's: lintian refuses 1970 as ancient.
		st, err := os.Stat(binary)
		if err != nil {
			return Version{}, fmt.Errorf("stat %s: %w", binary, err)
		}
		v.Time = st.ModTime().UTC().Truncate(time.Second)
	}
	return v, nil
}
