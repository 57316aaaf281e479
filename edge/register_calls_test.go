// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/pkg/testkit"
)

// slowRegister is a lease source whose registrations wait until several are in flight at once (or
// the test ends), as a coordinator a datacenter away holds each for a round trip and a commit.
type slowRegister struct {
	*lease.Local
	want    int
	mu      sync.Mutex
	now     int
	most    int
	enough  chan struct{}
	release sync.Once
}

func (s *slowRegister) Register(ctx context.Context, found []lease.Found) (int, error) {
	s.mu.Lock()
	s.now++
	s.most = max(s.most, s.now)
	if s.now >= s.want {
		s.release.Do(func() { close(s.enough) })
	}
	s.mu.Unlock()
	select {
	case <-s.enough:
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.now--
	s.mu.Unlock()
	return s.Local.Register(ctx, found)
}

func (s *slowRegister) mostAtOnce() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.most
}

// A sweep's batches are registered several at a time: one after another, the last of a large
// sweep waited for every earlier round trip and arrived too old to register.
func TestEdge_ASweepsBatchesAreRegisteredSeveralAtATime(t *testing.T) {
	src := &slowRegister{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"}), want: 3, enough: make(chan struct{})}
	// Each sighting may wait a minute, so only concurrency lets three batches overlap.
	_, stop := run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, RegisterFresh: time.Minute,
		Flow: newFlow(provisioned), Finder: &finder{ids: ids(3500)}, Source: src})
	defer stop()
	testkit.WaitFor(t, 30*time.Second, "three registrations in flight at once", func() bool { return src.mostAtOnce() >= 3 })
}
