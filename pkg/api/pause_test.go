// SPDX-License-Identifier: Apache-2.0

package api_test

import (
	"testing"

	"github.com/seed96588659/muster/pkg/api"
)

// TestPauseMark_OrdersAnswersByEpochThenIndex: within one history the index orders answers; a
// recover's new epoch wins over any index of the history before it and restarts the indices;
// answers of older coordinators (no epoch, no index) keep today's rules.
func TestPauseMark_OrdersAnswersByEpochThenIndex(t *testing.T) {
	never := uint64(1)
	recovered := uint64(1_800_000_000_000_000_000)
	cases := []struct {
		name       string
		held, m    api.PauseMark
		older      bool
		takenAfter api.PauseMark
	}{
		{"same epoch, later index", api.PauseMark{Epoch: never, AsOf: 10}, api.PauseMark{Epoch: never, AsOf: 12}, false, api.PauseMark{Epoch: never, AsOf: 12}},
		{"same epoch, earlier index", api.PauseMark{Epoch: never, AsOf: 12}, api.PauseMark{Epoch: never, AsOf: 10}, true, api.PauseMark{}},
		{"after a recover, a lower index", api.PauseMark{Epoch: never, AsOf: 500}, api.PauseMark{Epoch: recovered, AsOf: 460}, false, api.PauseMark{Epoch: recovered, AsOf: 460}},
		{"the lost history, answered late", api.PauseMark{Epoch: recovered, AsOf: 460}, api.PauseMark{Epoch: never, AsOf: 510}, true, api.PauseMark{}},
		{"a coordinator without the epoch", api.PauseMark{Epoch: recovered, AsOf: 460}, api.PauseMark{AsOf: 470}, false, api.PauseMark{Epoch: recovered, AsOf: 470}},
		{"a coordinator without the epoch, earlier", api.PauseMark{Epoch: recovered, AsOf: 460}, api.PauseMark{AsOf: 450}, true, api.PauseMark{}},
		{"a coordinator without the index", api.PauseMark{Epoch: never, AsOf: 500}, api.PauseMark{}, false, api.PauseMark{Epoch: never, AsOf: 500}},
		{"first answer", api.PauseMark{}, api.PauseMark{Epoch: never, AsOf: 3}, false, api.PauseMark{Epoch: never, AsOf: 3}},
	}
	for _, c := range cases {
		if got := c.m.Older(c.held); got != c.older {
			t.Errorf("%s: %+v older than %+v = %t, want %t", c.name, c.m, c.held, got, c.older)
			continue
		}
		if !c.older {
			if got := c.m.Taken(c.held); got != c.takenAfter {
				t.Errorf("%s: holding %+v after %+v, want %+v", c.name, got, c.m, c.takenAfter)
			}
		}
	}
}
