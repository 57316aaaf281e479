// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/config"
)

// The helper's arguments may hold secrets (a CMDB token on its command line), so the logged
// configuration names the helper by its program alone and says how many arguments it hides,
// as the helper package's own log lines do.
func TestRedacted_HelperShowsOnlyItsProgram(t *testing.T) {
	for _, tc := range []struct{ helper, want string }{
		{"/usr/local/bin/site-helper --cmdb-token s3cr3t-cmdb --region 'eu west'", "/usr/local/bin/site-helper (4 arguments hidden)"},
		{"'/opt/my helpers/site' --token=s3cr3t-cmdb", "/opt/my helpers/site (1 argument hidden)"},
		{"/bin/helper", "/bin/helper"},
		{"", ""},
		{"/bin/helper 's3cr3t-cmdb", config.Redacted}, // unbalanced quote: no program to tell apart
	} {
		c := config.Defaults()
		c.Helper = tc.helper
		m := c.Redacted()
		if m["helper"] != tc.want {
			t.Errorf("helper %q logs as %q, want %q", tc.helper, m["helper"], tc.want)
		}
		if strings.Contains(fmt.Sprint(m), "s3cr3t-cmdb") {
			t.Errorf("helper %q: configuration shows its argument: %v", tc.helper, m)
		}
	}
}
