// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package coordproc

import "syscall"

// groupAttr starts a child in its own process group (no parent-death signal off Linux).
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
