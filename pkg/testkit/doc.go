// SPDX-License-Identifier: Apache-2.0

// Package testkit holds the test helpers every module's tests share: a log buffer, one wait for
// a condition, and a throwaway certificate authority. It depends on the standard library only,
// so any module may import it from its tests without gaining a requirement; helpers that need
// the lab or the coordinator stay in those modules.
package testkit
