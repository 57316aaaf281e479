// SPDX-License-Identifier: Apache-2.0

package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/choria-io/go-choria/choria"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Load reads the --config file, the environment and the flags set on fs (declared by
// BindFlags; fs may be nil), and checks every value. The warnings name keys that are accepted
// but ignored, and unknown keys; the caller logs them. The error names every key whose value is
// invalid, with the reason.
func Load(fs *pflag.FlagSet) (*Config, []string, error) {
	v := viper.New()
	for _, k := range allKeys() {
		if err := v.BindEnv(k.name, EnvName(k.name)); err != nil {
			return nil, nil, fmt.Errorf("bind %s: %w", EnvName(k.name), err)
		}
		if fs == nil || k.flag == "" {
			continue
		}
		if f := fs.Lookup(k.flag); f != nil {
			if err := v.BindPFlag(k.name, f); err != nil {
				return nil, nil, fmt.Errorf("bind --%s: %w", f.Name, err)
			}
		}
	}

	var warn warnings
	file, err := source(fs, FlagConfig)
	if err != nil {
		return nil, nil, err
	}
	if file != "" {
		fileKeys, err := readFile(v, file)
		if err != nil {
			return nil, nil, err
		}
		warn.fileKeys(fileKeys)
	}
	warn.environment(os.Environ())

	for k, val := range defaultValues() {
		v.SetDefault(k, val)
	}
	c, err := parse(v)
	if err != nil {
		return nil, nil, err
	}
	c.File = file
	if err := checkFiles(c); err != nil {
		return nil, nil, err
	}
	return c, warn.list, nil
}

// source returns the --NAME flag if given, else MUSTER_EDGE_NAME.
func source(fs *pflag.FlagSet, name string) (string, error) {
	if fs != nil {
		if f := fs.Lookup(name); f != nil && f.Changed {
			if strings.TrimSpace(f.Value.String()) == "" {
				return "", fmt.Errorf("--%s: empty file name", name)
			}
			return f.Value.String(), nil
		}
	}
	return strings.TrimSpace(os.Getenv(EnvName(name))), nil
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

// defaultValues are the keys' defaults in the form a file would hold them.
func defaultValues() map[string]any {
	d := map[string]any{}
	for _, k := range allKeys() {
		if k.def != nil {
			d[k.name] = k.def
		}
	}
	d["cert_deny_list"] = DefaultCertDenyList()
	// As the anchor's --choria-config: Choria's user configuration, but only one that exists, so
	// that a machine without one is not refused before the caller says which file to use.
	if p := choria.UserConfig(); p != "" && isFile(p) {
		d["choria_config"] = p
	}
	return d
}

// checkFiles refuses files that must exist at start-up and do not.
func checkFiles(c *Config) error {
	var errs []error
	if c.ChoriaConfig != "" && !isFile(c.ChoriaConfig) {
		errs = append(errs, &FieldError{Key: "choria_config", Reason: fmt.Sprintf("%s is not a readable file", c.ChoriaConfig)})
	}
	for _, f := range []struct{ key, path string }{{"coordinator_tls_cert", c.CoordinatorTLSCert}, {"coordinator_tls_key", c.CoordinatorTLSKey}, {"coordinator_tls_ca", c.CoordinatorTLSCA}} {
		if f.path != "" && !isFile(f.path) {
			errs = append(errs, &FieldError{Key: f.key, Reason: fmt.Sprintf("%s is not a readable file", f.path)})
		}
	}
	return errors.Join(errs...)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
