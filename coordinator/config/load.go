// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/pkg/settings"
)

// FlagConfig names the flag that points at the YAML file.
const FlagConfig = settings.FlagConfig

// Flags declares --config and one flag per key on fs; their defaults are shown, not applied,
// so that only a flag given on the command line overrides the environment and the file.
func Flags(fs *pflag.FlagSet) { schema().DeclareFlags(fs) }

// Load reads the file named by --config (or MUSTER_CONFIG), the environment and the flags set on
// fs, and checks every value. fs may be nil, to read only the file and the environment.
func Load(fs *pflag.FlagSet) (Config, error) {
	s := schema()
	src, err := s.Open(fs)
	if err != nil {
		return Config{}, err
	}
	if err := unknownKeys(s, src); err != nil {
		return Config{}, err
	}
	c, err := parse(src.Reader)
	if err != nil {
		return Config{}, err
	}
	c.Warnings = c.warnings(os.Environ(), fs)
	return c, nil
}

// unknownKeys refuses keys in the file that no setting has, so a misspelt key is not silently
// ignored; a scalar where a section of keys belongs is one of them.
func unknownKeys(s *settings.Schema, src *settings.Source) error {
	var bad []string
	for _, k := range src.FileKeys {
		if _, ok := s.Lookup(k); !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	for i, k := range bad {
		bad[i] = k + s.SuggestKey(k)
	}
	return fmt.Errorf("config file %s: unknown key(s) %s", src.File, strings.Join(bad, ", "))
}
