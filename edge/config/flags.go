// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"

	"github.com/spf13/pflag"
)

// BindFlags declares on fs --config and one flag per key that has one. Their defaults are
// shown, not applied: only a flag given on the command line overrides the environment and the
// file. Secrets have no flag (see the package documentation).
func BindFlags(fs *pflag.FlagSet) {
	fs.String(FlagConfig, "", "YAML configuration file (env "+EnvName(FlagConfig)+")")
	for _, k := range allKeys() {
		if k.flag == "" {
			continue
		}
		usage := fmt.Sprintf("%s (key %s, env %s)", k.usage, k.name, EnvName(k.name))
		switch k.kind {
		case kBool:
			fs.Bool(k.flag, false, usage)
		case kInt:
			def, _ := k.def.(int)
			fs.Int(k.flag, def, usage)
		case kList:
			fs.StringSlice(k.flag, nil, usage)
		default:
			def, _ := k.def.(string)
			fs.String(k.flag, def, usage)
		}
	}
}
