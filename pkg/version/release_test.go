// SPDX-License-Identifier: Apache-2.0

package version

import "testing"

// TestFromModuleVersion_SortsLikeSemverInDebAndRpm: a release keeps its number, a pre-release
// goes behind a tilde (deb and rpm sort it before the release, as semver does), and a Go
// pseudo-version is not taken for a release.
func TestFromModuleVersion_SortsLikeSemverInDebAndRpm(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.0":            "1.2.0",
		"v1.3.0-rc.1":       "1.3.0~rc.1",
		"v2.0.0-beta-2":     "2.0.0~beta.2",
		"v1.2.0+dirty":      "1.2.0+dirty",
		"v1.3.0-rc.1+dirty": "1.3.0~rc.1+dirty",
	} {
		if !isRelease(in) {
			t.Errorf("isRelease(%q) = false", in)
		}
		if got := fromModuleVersion(in); got != want {
			t.Errorf("fromModuleVersion(%q) = %q, want %q", in, got, want)
		}
	}
	for _, v := range []string{"", "(devel)", "v0.0.0-20261201222503-53b45d068953", "v1.2.1-0.20261201222503-53b45d068953+dirty"} {
		if isRelease(v) {
			t.Errorf("isRelease(%q) = true", v)
		}
	}
}
