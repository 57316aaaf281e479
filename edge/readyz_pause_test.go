// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/monitor"
	"github.com/seed96588659/muster/pkg/testkit"
)

// readPause reads what /readyz and GET /pause of the edge's monitor say of the pause.
func readPause(t *testing.T, h http.Handler, path string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: %d %q: %v", path, rec.Code, rec.Body.String(), err)
	}
	return body
}

// TestMonitor_ReadyzReportsTheCoordinatorsPause: while the coordinators pause provisioning the
// edge's /readyz and GET /pause say paused, and by whom; the operator's own pause through the
// edge reads apart from it.
func TestMonitor_ReadyzReportsTheCoordinatorsPause(t *testing.T) {
	src := &pausingSource{reports: newReports(), flags: make(chan bool), acked: make(chan struct{})}
	e, _ := run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, Flow: newFlow(provisioned),
		Finder: &finder{}, Mode: edge.Cluster(src)})
	testkit.WaitFor(t, 10*time.Second, "the edge running", e.Ready)
	h := monitor.Handler(e, http.NotFoundHandler(), "")

	src.setPaused(t, true)
	for _, path := range []string{"/readyz", "/pause"} {
		// An acquire answered before the change may carry the old flag until the next answer.
		testkit.WaitFor(t, 10*time.Second, path+" to report the coordinators' pause", func() (bool, string) {
			b := readPause(t, h, path)
			return b["paused"] == true && b["paused_by_coordinator"] == true && b["paused_here"] == false, path + " answered " + jsonText(b)
		})
	}
	src.setPaused(t, false)
	e.Pause()
	testkit.WaitFor(t, 10*time.Second, "/readyz to report the operator's pause alone", func() (bool, string) {
		b := readPause(t, h, "/readyz")
		return b["paused"] == true && b["paused_by_coordinator"] == false && b["paused_here"] == true, "/readyz answered " + jsonText(b)
	})
	e.Resume()
	if b := readPause(t, h, "/readyz"); b["paused"] != false {
		t.Fatalf("/readyz after both pauses ended: %s", jsonText(b))
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
