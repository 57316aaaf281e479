// SPDX-License-Identifier: Apache-2.0

// Package packaging builds the .deb and .rpm packages of muster-coordinator and muster-edge with
// nfpm: the binaries of make build, the systemd units and example configuration of deploy/, a
// man page from each binary's --help, maintainer scripts that create the muster user, and the
// directories the services need. cmd/muster-package is its command line (make packages);
// README.md beside this file describes the layout and what lintian and rpmlint say about it.
package packaging
