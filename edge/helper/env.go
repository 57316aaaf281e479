// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"slices"
	"strings"
)

// reservedPrefix starts the edge's and the coordinator's own variables, their tokens among them.
const reservedPrefix = "MUSTER_"

// environment picks from env (os.Environ's form) what a helper gets: PATH, HOME, LANG, every
// LC_*, TZ, TMPDIR and the names in extra, never a MUSTER_ variable. The helper's output and its
// children are outside the edge's control, so it gets what it needs to run, not the edge's
// credentials; choria-provisioner passed its whole environment.
func environment(env, extra []string) []string {
	out := make([]string, 0, 8+len(extra))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(name, reservedPrefix) {
			continue
		}
		if baseVariable(name) || slices.Contains(extra, name) {
			out = append(out, kv)
		}
	}
	return out
}

// baseVariable reports whether every helper gets name: enough to find programs, read its own
// files and format text and times.
func baseVariable(name string) bool {
	switch name {
	case "PATH", "HOME", "LANG", "TZ", "TMPDIR":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}
