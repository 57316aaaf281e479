// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package demo

import "syscall"

// procAttr starts a child in its own process group (no parent-death signal off Linux).
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
