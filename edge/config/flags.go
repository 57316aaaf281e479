// SPDX-License-Identifier: Apache-2.0

package config

import (
	"github.com/spf13/pflag"
)

// BindFlags declares on fs --config and one flag per key that has one. Their defaults are
// shown, not applied: only a flag given on the command line overrides the environment and the
// file. Secrets have no flag (see the package documentation).
func BindFlags(fs *pflag.FlagSet) { schema().DeclareFlags(fs) }
