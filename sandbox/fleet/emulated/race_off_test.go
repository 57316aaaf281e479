// SPDX-License-Identifier: Apache-2.0

//go:build !race

package emulated

// raceEnabled is false without -race; see race_on_test.go.
const raceEnabled = false
