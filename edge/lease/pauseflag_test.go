// SPDX-License-Identifier: Apache-2.0

package lease_test

import (
	"testing"

	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/api"
)

// A flag read before the one held is dropped, whatever order the answers arrive in; a newer
// epoch (after a recover) is taken though its index is lower.
func TestPauseFlag_DropsAFlagReadBeforeTheOneHeld(t *testing.T) {
	var f lease.PauseFlag
	if taken, changed := f.Take(true, api.PauseMark{Epoch: 1, AsOf: 20}); !taken || !changed || !f.Paused() {
		t.Fatal("the first pause was not taken")
	}
	if taken, _ := f.Take(false, api.PauseMark{Epoch: 1, AsOf: 10}); taken || !f.Paused() {
		t.Fatal("a resume read before the pause held was taken")
	}
	if taken, changed := f.Take(true, api.PauseMark{Epoch: 1, AsOf: 30}); !taken || changed {
		t.Fatalf("the same flag read later: taken %t, changed %t; want taken, unchanged", taken, changed)
	}
	if taken, changed := f.Take(false, api.PauseMark{Epoch: 2, AsOf: 5}); !taken || !changed || f.Paused() || f.At() != (api.PauseMark{Epoch: 2, AsOf: 5}) {
		t.Fatalf("a newer epoch's resume: taken %t, changed %t, held %+v", taken, changed, f.At())
	}
	if taken, _ := f.Take(true, api.PauseMark{}); !taken {
		t.Fatal("an answer without a mark (a local source, an older coordinator) was dropped")
	}
}
