// SPDX-License-Identifier: Apache-2.0

package labkit

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
)

// EdgeConfig writes the edge configuration of region of l, running the sample helper at helper,
// and loads it as `muster-edge run --config FILE` does.
func EdgeConfig(t testing.TB, l *lab.Lab, region, helper string) *config.Config {
	t.Helper()
	file, err := edgefile.Write(l, region, helper)
	if err != nil {
		t.Fatalf("edge configuration: %v", err)
	}
	fs := pflag.NewFlagSet("muster-edge", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Set(config.FlagConfig, file); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(fs)
	if err != nil {
		t.Fatalf("load %s: %v", file, err)
	}
	return cfg
}
