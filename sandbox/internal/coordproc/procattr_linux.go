// SPDX-License-Identifier: Apache-2.0

package coordproc

import "syscall"

// groupAttr starts a child in its own process group, so a terminal's Ctrl-C does not reach it,
// and has the kernel kill it if this process dies without stopping it.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
