// SPDX-License-Identifier: Apache-2.0

package version

import (
	"runtime/debug"
	"testing"
)

func TestUpstream_ReleaseOrCommit(t *testing.T) {
	commit := func(modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "53b45d06a1b2c3d4e5f60718293a4b5c6d7e8f90"}, {Key: "vcs.time", Value: "2026-12-01T22:25:03Z"}, {Key: "vcs.modified", Value: modified}}}
	}
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "1.2.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.3.0-rc.1"}}, "1.3.0~rc.1"},
		{commit("false"), "0.0.0~git20261201222503.53b45d06"},
		{commit("true"), "0.0.0~git20261201222503.53b45d06+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201222503-53b45d06a1b2"}}, ""},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ""},
		{nil, ""},
	} {
		if got := Upstream(tc.info); got != tc.want {
			t.Errorf("Upstream(%+v) = %q, want %q", tc.info, got, tc.want)
		}
	}
}
