// SPDX-License-Identifier: Apache-2.0

// Package packagesuite checks the .deb and .rpm packages of tools/packaging as a user and the
// distributions' linters see them: lintian and rpmlint, the layout dpkg-deb and rpm show, the
// binaries and units taken out of the packages, and the maintainer scripts run against stand-in
// user tools. It holds tests only; the test installs the Debian packages it needs when missing.
package packagesuite
