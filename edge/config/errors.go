// SPDX-License-Identifier: Apache-2.0

package config

import "github.com/seed96588659/muster/pkg/settings"

// FieldError is one invalid value: the key as written in the file, and why it was refused.
// Load and Validate join one per key with errors.Join; errors.As finds the first.
type FieldError = settings.FieldError
