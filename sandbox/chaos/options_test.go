// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"strings"
	"testing"
	"time"
)

// TestOptions_ValidateNamesTheField: a run starts from DefaultOptions; what a caller then sets
// wrong is refused naming the field, never replaced by a default.
func TestOptions_ValidateNamesTheField(t *testing.T) {
	valid := func() Options {
		o := DefaultOptions()
		o.Dir, o.Rounds = t.TempDir(), 1
		return o
	}
	if err := valid().Validate(); err != nil {
		t.Fatalf("DefaultOptions with a Dir and a round: %v", err)
	}
	for _, c := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Dir = "" }, "Dir is required"},
		{func(o *Options) { o.Rounds = 0 }, "rounds 0"},
		{func(o *Options) { o.Emulated = 0 }, "Emulated is 0"},
		{func(o *Options) { o.Real = 1 }, "NodeBinary is required"},
		{func(o *Options) { o.LeaseTTL = 3 * time.Second }, "MaxWait is 2s"},
		{func(o *Options) { o.LeaseGrace = 0 }, "LeaseGrace is 0s"},
		{func(o *Options) { o.Kinds = nil }, "Kinds is empty"},
	} {
		o := valid()
		c.edit(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}
