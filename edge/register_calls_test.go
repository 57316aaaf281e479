// SPDX-License-Identifier: Apache-2.0

package edge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge"
	"github.com/seed96588659/muster/edge/lease"
	"github.com/seed96588659/muster/edge/register"
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

func (s *slowRegister) Register(ctx context.Context, found []register.Found) (int, error) {
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
		Flow: newFlow(provisioned), Finder: &finder{ids: ids(3500)}, Mode: edge.Standalone(src)})
	defer stop()
	testkit.WaitFor(t, 30*time.Second, "three registrations in flight at once", func() bool { return src.mostAtOnce() >= 3 })
}

// recordingRegister is a lease source that keeps every registration's identities.
type recordingRegister struct {
	*lease.Local
	mu      sync.Mutex
	batches [][]string
}

func (s *recordingRegister) Register(ctx context.Context, found []register.Found) (int, error) {
	batch := make([]string, len(found))
	for i, f := range found {
		batch[i] = f.Identity
	}
	s.mu.Lock()
	s.batches = append(s.batches, batch)
	s.mu.Unlock()
	return s.Local.Register(ctx, found)
}

func (s *recordingRegister) registered() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

// A sweep registers its nodes in identity order, each batch a range of its own, whatever order
// the replies came in: the ledger keys nodes by identity, so a lease of neighbours rewrites a few
// pages of its node index on every member, and one of scattered nodes a page per node.
func TestEdge_ASweepRegistersRangesOfIdentities(t *testing.T) {
	found := ids(2500)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(found), func(i, j int) { found[i], found[j] = found[j], found[i] })
	src := &recordingRegister{Local: lease.NewLocal(lease.LocalOptions{Edge: "e", Region: "r"})}
	_, stop := run(t, edge.Options{Site: "s", Workers: 1, Interval: time.Hour, RegisterFresh: time.Minute,
		Flow: newFlow(provisioned), Finder: &finder{ids: found}, Mode: edge.Standalone(src)})
	defer stop()
	testkit.WaitFor(t, 30*time.Second, "the sweep registered", func() (bool, string) {
		n := 0
		for _, b := range src.registered() {
			n += len(b)
		}
		return n >= len(found), fmt.Sprintf("%d of %d registered", n, len(found))
	})
	batches := src.registered()
	slices.SortFunc(batches, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	for i, b := range batches {
		if !slices.IsSorted(b) {
			t.Fatalf("batch %d of %d is not in identity order: %v", i, len(b), b)
		}
		if i > 0 && batches[i-1][len(batches[i-1])-1] >= b[0] {
			t.Fatalf("batches overlap: one ends at %s, the next starts at %s", batches[i-1][len(batches[i-1])-1], b[0])
		}
	}
}
