// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/edge/config"
)

// A choria-provisioner configuration file loads unchanged; a flag overrides one of its keys.
func ExampleLoad() {
	fs := pflag.NewFlagSet("muster-edge", pflag.ContinueOnError)
	config.BindFlags(fs)
	_ = fs.Parse([]string{"--config", "testdata/choria-provisioner/docs-common-settings.yaml", "--workers", "128"})

	c, warnings, err := config.Load(fs)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	r := c.Redacted()
	fmt.Println(c.Workers, c.Interval, c.Region, c.Features.ED25519, c.Features.JWT)
	fmt.Println(r["token"], r["broker_provisioning_password"])
	// Output:
	// 128 1m0s testing true true
	// [redacted] [redacted]
}
