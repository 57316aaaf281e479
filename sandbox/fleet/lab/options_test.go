// SPDX-License-Identifier: Apache-2.0

package lab

import (
	"context"
	"strings"
	"testing"
)

func TestOptions_BadInputIsNamed(t *testing.T) {
	cases := []struct {
		opts Options
		want string
	}{
		{Options{}, "Dir is required"},
		{Options{Dir: "x", Regions: []string{"EU"}}, `region "EU"`},
		{Options{Dir: "x", Regions: []string{"eu", "eu"}}, `region "eu" given twice`},
		{Options{Dir: "x", Real: -1}, "real node count -1"},
		{Options{Dir: "x", Emulated: -2}, "emulated node count -2"},
		{Options{Dir: "x", Real: 2}, "NodeBinary is required"},
	}
	for _, c := range cases {
		_, err := c.opts.withDefaults()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opts, err, c.want)
		}
	}
}

func TestStart_SecondLabInSameDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first, err := Start(ctx, Options{Dir: dir, Emulated: 1, ReleaseCache: "off"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(ctx, Options{Dir: dir, Emulated: 1, ReleaseCache: "off"})
	if err == nil || !strings.Contains(err.Error(), "in use by another lab") {
		t.Fatalf("second lab in the same dir: %v", err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	again, err := Start(ctx, Options{Dir: dir, Emulated: 1, ReleaseCache: "off"})
	if err != nil {
		t.Fatalf("lab after the first stopped: %v", err)
	}
	again.Stop()
}
