// SPDX-License-Identifier: Apache-2.0

package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/choria-io/go-choria/choria"
	"github.com/spf13/pflag"
)

// Load reads the --config file, the environment and the flags set on fs (declared by
// BindFlags; fs may be nil), and checks every value. The warnings name keys that are accepted
// but ignored, unknown keys, and a pause token the network could read; the caller logs them. The error names every key whose value is
// invalid, with the reason.
func Load(fs *pflag.FlagSet) (*Config, []string, error) {
	s := schema()
	src, err := s.Open(fs)
	if err != nil {
		return nil, nil, err
	}
	warn := warnings{s: s}
	warn.fileKeys(src.FileKeys)
	warn.environment(os.Environ())
	// As choria-provisioner's --choria-config: Choria's user configuration, but only one that
	// exists, so that a machine without one is not refused before the caller says which file
	// to use.
	if p := choria.UserConfig(); p != "" && isFile(p) {
		src.SetDefault("choria_config", p)
	}
	c, err := parse(src.Reader)
	if err != nil {
		return nil, nil, err
	}
	c.File = src.File
	if err := checkFiles(c); err != nil {
		return nil, nil, err
	}
	warn.monitor(c)
	return c, warn.list, nil
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
