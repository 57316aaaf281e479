// SPDX-License-Identifier: Apache-2.0

package testkit

import "slices"

// Missing is what of want got lacks, in want's order (nil when nothing is missing): the words
// of a failure that compares two lists, say documented keys and the code's.
func Missing(want, got []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, w)
		}
	}
	return out
}
