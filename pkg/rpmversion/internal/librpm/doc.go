// SPDX-License-Identifier: Apache-2.0

// Package librpm calls the real librpm (cgo, build tag librpm) so tests can check
// rpmversion against it; without the tag it is empty and nothing links librpm.
package librpm
