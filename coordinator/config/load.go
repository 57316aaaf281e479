// SPDX-License-Identifier: Apache-2.0

package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// FlagConfig names the flag that points at the YAML file.
const FlagConfig = "config"

// Flags declares --config and one flag per key on fs; their defaults are shown, not applied,
// so that only a flag given on the command line overrides the environment and the file.
func Flags(fs *pflag.FlagSet) {
	fs.String(FlagConfig, "", "YAML configuration file (env "+EnvPrefix+"_CONFIG)")
	for _, k := range allKeys() {
		name := flagName(k.name)
		usage := fmt.Sprintf("%s (key %s, env %s)", k.usage, k.name, EnvName(k.name))
		switch k.kind {
		case kBool:
			fs.Bool(name, k.def.(bool), usage)
		case kList:
			fs.StringSlice(name, nil, usage)
		default:
			fs.String(name, fmt.Sprint(k.def), usage)
		}
	}
}

// Load reads the file named by --config (or MUSTER_CONFIG), the environment and the flags set on
// fs, and checks every value. fs may be nil, to read only the file and the environment.
func Load(fs *pflag.FlagSet) (Config, error) {
	v := viper.New()
	for _, k := range allKeys() {
		v.SetDefault(k.name, k.def)
		if err := v.BindEnv(k.name, EnvName(k.name)); err != nil {
			return Config{}, fmt.Errorf("bind %s: %w", EnvName(k.name), err)
		}
		if fs == nil {
			continue
		}
		if f := fs.Lookup(flagName(k.name)); f != nil {
			if err := v.BindPFlag(k.name, f); err != nil {
				return Config{}, fmt.Errorf("bind --%s: %w", f.Name, err)
			}
		}
	}
	file, err := configFile(fs)
	if err != nil {
		return Config{}, err
	}
	if file != "" {
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("config file %s: %w", file, err)
		}
		if err := unknownKeys(v, file); err != nil {
			return Config{}, err
		}
	}
	c, err := parse(v)
	if err != nil {
		return Config{}, err
	}
	c.Warnings = c.warnings(os.Environ(), fs)
	return c, nil
}

// configFile returns --config if given, else MUSTER_CONFIG.
func configFile(fs *pflag.FlagSet) (string, error) {
	if fs != nil {
		if f := fs.Lookup(FlagConfig); f != nil && f.Changed {
			if f.Value.String() == "" {
				return "", errors.New("--config: empty file name")
			}
			return f.Value.String(), nil
		}
	}
	return lookupEnv(EnvPrefix + "_CONFIG"), nil
}

// unknownKeys refuses keys in the file that no setting has, so a misspelt key is not silently ignored.
func unknownKeys(v *viper.Viper, file string) error {
	known := map[string]bool{}
	for _, k := range allKeys() {
		known[k.name] = true
	}
	var bad []string
	for _, k := range v.AllKeys() {
		if !known[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("config file %s: unknown key(s) %s", file, strings.Join(bad, ", "))
}
