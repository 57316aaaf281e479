// SPDX-License-Identifier: Apache-2.0

package settings

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Source is a Reader over one load's layers, and the file it read.
type Source struct {
	*Reader
	// File is the configuration file read, "" if none.
	File string
	// FileKeys are the keys the file holds, each at its full depth (raft.bind).
	FileKeys []string
}

// Open layers, highest first, the flags given on fs (declared by DeclareFlags; fs may be nil),
// the environment, the file named by --config or PREFIX_CONFIG, and the keys' defaults.
func (s *Schema) Open(fs *pflag.FlagSet) (*Source, error) {
	v := viper.New()
	for _, k := range s.Keys {
		if k.Default != nil {
			v.SetDefault(k.Name, k.Default)
		}
		if err := v.BindEnv(k.Name, s.EnvName(k.Name)); err != nil {
			return nil, fmt.Errorf("bind %s: %w", s.EnvName(k.Name), err)
		}
		if f := s.flag(fs, k); f != nil && f.Changed {
			v.Set(k.Name, flagValue(f))
		}
	}
	src := &Source{Reader: &Reader{s: s, v: v}}
	file, err := s.configFile(fs)
	if err != nil {
		return nil, err
	}
	if file != "" {
		if src.FileKeys, err = readFile(v, file); err != nil {
			return nil, err
		}
		src.File = file
	}
	return src, nil
}

// flag is key's flag on fs, nil when it has none.
func (s *Schema) flag(fs *pflag.FlagSet, k Key) *pflag.Flag {
	if fs == nil || k.Flag == "" || k.Secret {
		return nil
	}
	return fs.Lookup(k.Flag)
}

// flagValue is a flag's value as the Reader takes it: a list's items, else its text, which the
// Reader parses as it parses the environment's.
func flagValue(f *pflag.Flag) any {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return f.Value.String()
}

// configFile returns the file named by --config if given, else by PREFIX_CONFIG.
func (s *Schema) configFile(fs *pflag.FlagSet) (string, error) {
	if fs != nil {
		if f := fs.Lookup(FlagConfig); f != nil && f.Changed {
			if strings.TrimSpace(f.Value.String()) == "" {
				return "", fmt.Errorf("--%s: empty file name", FlagConfig)
			}
			return f.Value.String(), nil
		}
	}
	return strings.TrimSpace(os.Getenv(s.EnvName(FlagConfig))), nil
}

// readFile merges the YAML file into v's file layer and returns the keys the file holds.
func readFile(v *viper.Viper, file string) ([]string, error) {
	fv := viper.New()
	fv.SetConfigFile(file)
	fv.SetConfigType("yaml")
	if err := fv.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	if err := v.MergeConfigMap(fv.AllSettings()); err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	return fv.AllKeys(), nil
}
