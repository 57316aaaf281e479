// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// sayLeftBehind ends a run with where its files stay, how much disk they take and how to remove
// them: the lab (a copy of the node binary per real node, the brokers' stores), the members'
// data and the logs take hundreds of megabytes, kept for a look after the run.
func (r *runner) sayLeftBehind() {
	r.say("== this run's files (lab, coordinator data, logs, report) stay in %s: %.0f MB on disk", r.o.Dir, float64(diskUsage(r.o.Dir))/(1<<20))
	r.say("   remove them when done: rm -rf %s", shellQuote(r.o.Dir))
}

// diskUsage is the disk space the files below dir take (their allocated blocks where the system
// says, which a sparse database file does not fill); files that vanish while it walks are skipped.
func diskUsage(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
			return nil
		}
		total += info.Size()
		return nil
	})
	return total
}

// shellQuote quotes s for a POSIX shell when it holds anything but a path's plain characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
