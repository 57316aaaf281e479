// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package childproc

import "syscall"

// procAttr gives a child its own process group with group (no parent-death signal off Linux).
func procAttr(group bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: group} }
