// SPDX-License-Identifier: Apache-2.0

package packaging

// GoBuildFlags are the go build flags of the binaries the packages ship; make packages passes
// the same. -buildmode=pie as Fedora's and RHEL's Go packages build (ASLR; lintian takes a
// position-independent binary with no libraries, where it refuses a static one), no symbol
// table, and none of the build machine's paths.
func GoBuildFlags() []string { return []string{"-trimpath", "-buildmode=pie", "-ldflags=-s"} }

// GoBuildEnv is the environment those builds add: without cgo the binary needs no libc, so one
// package runs on Debian 12 and on el9, whose glibc is older.
func GoBuildEnv() []string { return []string{"CGO_ENABLED=0"} }
