// SPDX-License-Identifier: Apache-2.0

package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/choria-io/go-choria/choria"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// SampleHelperName is the sample helper that --lab runs, looked for next to the executable.
const SampleHelperName = "muster-helper-sample"

// Option changes how Load and FromLab find things on this machine.
type Option func(*options)

type options struct {
	sampleHelper string
	environ      func() []string
}

// WithSampleHelper makes --lab (and FromLab) run the sample helper at path instead of the one
// next to the executable.
func WithSampleHelper(path string) Option {
	return func(o *options) { o.sampleHelper = path }
}

func newOptions(opts []Option) options {
	o := options{environ: os.Environ}
	for _, opt := range opts {
		opt(&o)
	}
	if o.sampleHelper == "" {
		if exe, err := os.Executable(); err == nil {
			o.sampleHelper = filepath.Join(filepath.Dir(exe), SampleHelperName)
		} else {
			o.sampleHelper = SampleHelperName
		}
	}
	return o
}

// Load reads the --lab defaults, the --config file, the environment and the flags set on fs
// (declared by BindFlags; fs may be nil), and checks every value. The warnings name keys that
// are accepted but ignored, and unknown keys; the caller logs them. The error names every key
// whose value is invalid, with the reason.
func Load(fs *pflag.FlagSet, opts ...Option) (*Config, []string, error) {
	o := newOptions(opts)
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
	warn.environment(o.environ())

	defaults := defaultValues()
	lab, err := source(fs, FlagLab)
	if err != nil {
		return nil, nil, err
	}
	var labHelper string
	if lab != "" {
		// The region picks the lab's region, so it is read before the lab's defaults exist.
		region, _ := v.Get("region").(string)
		values, err := labValues(lab, strings.TrimSpace(region), o.sampleHelper)
		if err != nil {
			return nil, nil, err
		}
		for k, val := range values {
			defaults[k] = val
		}
		labHelper, _ = values["helper"].(string)
	}
	for k, val := range defaults {
		v.SetDefault(k, val)
	}

	c, err := parse(v)
	if err != nil {
		return nil, nil, err
	}
	c.File, c.Lab = file, lab
	if err := checkFiles(c, labHelper, o.sampleHelper); err != nil {
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
func checkFiles(c *Config, labHelper, sampleHelper string) error {
	var errs []error
	if c.ChoriaConfig != "" && !isFile(c.ChoriaConfig) {
		errs = append(errs, &FieldError{Key: "choria_config", Reason: fmt.Sprintf("%s is not a readable file", c.ChoriaConfig)})
	}
	for _, f := range []struct{ key, path string }{{"coordinator_tls_cert", c.CoordinatorTLSCert}, {"coordinator_tls_key", c.CoordinatorTLSKey}, {"coordinator_tls_ca", c.CoordinatorTLSCA}} {
		if f.path != "" && !isFile(f.path) {
			errs = append(errs, &FieldError{Key: f.key, Reason: fmt.Sprintf("%s is not a readable file", f.path)})
		}
	}
	if labHelper != "" && c.Helper == labHelper && !isFile(sampleHelper) {
		errs = append(errs, &FieldError{Key: "helper", Reason: fmt.Sprintf("the lab's sample helper %s does not exist (build %s next to the edge, or set --helper)", sampleHelper, SampleHelperName)})
	}
	return errors.Join(errs...)
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
