// SPDX-License-Identifier: Apache-2.0

package childproc

import "syscall"

// procAttr has the kernel kill a child if this process dies without stopping it (a test binary
// that panics runs no cleanup); with group, the child also gets its own process group, so a
// terminal's Ctrl-C does not reach it.
func procAttr(group bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group, Pdeathsig: syscall.SIGKILL}
}
