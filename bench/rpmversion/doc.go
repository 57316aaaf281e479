// SPDX-License-Identifier: Apache-2.0

// Package rpmversionbench benchmarks pkg/rpmversion against github.com/knqyf263/go-rpm-version
// on the same pairs; it is a separate module so that pkg never depends on the latter.
package rpmversionbench
