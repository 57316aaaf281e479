// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestOldNames_FillOnlyWhatTheNewNamesLeftEmpty(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		newEnv  string
		oldEnv  string
		want    string
		warning string
	}{
		{"new flag", []string{"--choria-provisioner", "/new"}, "", "", "/new", ""},
		{"new variable", nil, "/new-env", "", "/new-env", ""},
		{"old flag", []string{"--anchor", "/old"}, "", "", "/old", "--anchor is deprecated"},
		{"old flag loses to new flag", []string{"--anchor", "/old", "--choria-provisioner", "/new"}, "", "", "/new", "--anchor is deprecated"},
		{"old flag beats new variable", []string{"--anchor", "/old"}, "/new-env", "", "/old", "--anchor is deprecated"},
		{"old variable", nil, "", "/old-env", "/old-env", "MUSTER_ANCHOR_BIN is deprecated"},
		{"old variable loses to new variable", nil, "/new-env", "/old-env", "/new-env", ""},
		{"explicit empty new flag is not overridden", []string{"--choria-provisioner", ""}, "", "/old-env", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("muster-benchreport", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			bin := fs.String("choria-provisioner", tc.newEnv, "")
			old := oldNames{flag: fs.String("anchor", "", ""), env: tc.oldEnv}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			var warn strings.Builder
			old.apply(fs, bin, &warn)
			if *bin != tc.want {
				t.Errorf("binary %q, want %q", *bin, tc.want)
			}
			if tc.warning == "" && warn.Len() != 0 || !strings.Contains(warn.String(), tc.warning) {
				t.Errorf("warning %q, want one containing %q", warn.String(), tc.warning)
			}
		})
	}
}
