// SPDX-License-Identifier: Apache-2.0

package settings

import "strings"

// PlaceholderPrefix starts every example secret Muster ships (deploy/systemd/*.env.example,
// deploy/kubernetes/secrets.example.yaml): a value that starts with it was never replaced.
const PlaceholderPrefix = "replace-with"

// PlaceholderReason says why a placeholder is refused; the key's name goes before it. It never
// repeats the value: a real secret that happens to start so must not reach a log line.
const PlaceholderReason = "is the shipped example value (it starts with " + PlaceholderPrefix + "): set a secret of your own"

// Placeholder reports whether a secret's value is a shipped example, in any case.
func Placeholder(v string) bool {
	v = strings.TrimSpace(v)
	return len(v) >= len(PlaceholderPrefix) && strings.EqualFold(v[:len(PlaceholderPrefix)], PlaceholderPrefix)
}
