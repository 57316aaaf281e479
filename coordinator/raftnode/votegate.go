// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Why a vote gate. A member that lost its data directory and comes back under its old id and
// address is, to every other member, the voter it was; its acknowledgements counted towards
// commits it no longer holds. hashicorp/raft would let it vote at once (with an empty
// configuration it grants any candidate), so a lagging member and the empty one could elect a
// leader whose log lacks an acknowledged write. A member that starts without Raft state
// therefore neither votes nor campaigns until the leader has taken it back in: its old voter
// entry replaced by a non-voter, promoted once it has caught up (etcd's learners, Consul's
// autopilot). The gate sits in the transport, beneath raft: it answers RequestVote,
// RequestPreVote and TimeoutNow with an error, and sends none of its own vote requests, so a
// candidate term of the gated member can never gather a majority either. It stays closed
// across restarts through learnerFile, written before raft starts and removed only once the
// leader has said the member is a voter again.
//
// A promotion whose answer is lost. The leader commits a learner's promotion, then answers. If
// the answer never arrives (the leader fails, or every member is stopped right after the
// members joined) the member would stay gated for ever; after a restart of a freshly formed
// cluster every former learner is, and no leader can be elected. So the member also opens its
// gate itself (at start, before raft runs, and on every tick while it runs) when (a) the leader
// has named this incarnation a non-voter at configuration index since > 0 (a start without Raft
// state resets since to 0: a file that outlived raft.db names an earlier incarnation), (b) its
// state machine has applied the entries through since, and (c) the latest configuration in its
// own log (or snapshot) lists it, under its id and address, as a voter at an index above since.
// Safe even if that configuration is not committed: the gate exists so that no member votes
// without the entries its lost incarnation acknowledged. Every entry committed with such an
// acknowledgement lies below since: the entry at since made the member a non-voter, and a
// leader counts by the configuration in its log as soon as it is appended, so from then on the
// old incarnation's acknowledgements count towards no commit. An entry is applied only once
// committed, so (b) means this member holds the committed log through since (in its log or a
// snapshot), every such entry with it, and its term and votes since are its own, durable in
// raft.db: it is not the empty log the gate was for. (b) is needed beside (c): a configuration
// alone may come from a deposed leader whose log never held the entry at since (log matching
// says only that the member holds that leader's log). (c) keeps the leader's decision: the
// member votes once a leader promoted it, as the lost answer would have said. A member never
// named a non-voter (since 0) stays gated whatever its log says: a configuration from before it
// lost its state lists it as the voter it was. The leader's answer (Node.Promoted) stays the
// fast path.

// learnerFile in the data directory marks a member that has no vote yet.
const learnerFile = "raft-learner.json"

// errNoVoteYet answers a vote request while the gate is closed. Its text must never contain
// raft's "unexpected command": raft counts a pre-vote answered with that as granted (a peer too
// old for pre-vote).
var errNoVoteYet = errors.New("has no vote yet: it started without Raft state and waits to be promoted by the leader")

// learnerState is learnerFile's content.
type learnerState struct {
	// Since is the configuration index at which the leader last named this member a non-voter.
	Since uint64 `json:"since"`
}

// voteGate is a member's "not yet a voter" state, durable in learnerFile.
type voteGate struct {
	id, path string
	closed   atomic.Bool
	// refused counts vote requests answered with errNoVoteYet.
	refused atomic.Uint64
	mu      sync.Mutex
	state   learnerState
}

// openVoteGate reads dir's learnerFile; the gate is closed while the file exists. fresh (the
// member has no Raft state) writes it first, named a non-voter nowhere yet.
func openVoteGate(id, dir string, fresh bool) (*voteGate, error) {
	g := &voteGate{id: id, path: filepath.Join(dir, learnerFile)}
	b, err := os.ReadFile(g.path)
	switch {
	case fresh:
		// A learner file beside an empty raft.db names an earlier incarnation: its since must
		// not open this one's gate (see "A promotion whose answer is lost").
		if err := g.write(learnerState{}); err != nil {
			return nil, err
		}
		g.closed.Store(true)
	case err == nil:
		if err := json.Unmarshal(b, &g.state); err != nil {
			return nil, fmt.Errorf("read %s: %w (it marks a member that has no vote yet; if this member was promoted, delete the file)", g.path, err)
		}
		g.closed.Store(true)
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", g.path, err)
	}
	return g, nil
}

// promotedIn reports whether conf, this member's latest configuration, at index idx, shows the
// member (id at addr) promoted after the leader named it a non-voter at since, with applied
// entries through since applied ("A promotion whose answer is lost").
func promotedIn(conf raft.Configuration, idx uint64, id raft.ServerID, addr raft.ServerAddress, since, applied uint64) bool {
	if since == 0 || applied < since || idx <= since {
		return false
	}
	for _, s := range conf.Servers {
		if s.ID == id && s.Address == addr {
			return s.Suffrage == raft.Voter
		}
	}
	return false
}

// write replaces learnerFile durably (written, synced, renamed, directory synced).
func (g *voteGate) write(st learnerState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := g.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	_, err = f.Write(b)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, g.path); err != nil {
		return fmt.Errorf("write %s: %w", g.path, err)
	}
	g.state = st
	return syncDir(filepath.Dir(g.path))
}

// setSince records that the leader named this member a non-voter at configuration index idx.
func (g *voteGate) setSince(idx uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed.Load() || idx <= g.state.Since {
		return nil
	}
	return g.write(learnerState{Since: idx})
}

// since is the configuration index of the last answer that named this member a non-voter.
func (g *voteGate) since() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state.Since
}

// open lets the member vote: the leader has confirmed its promotion.
func (g *voteGate) open() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed.Load() {
		return nil
	}
	if err := os.Remove(g.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("open the vote of %s: %w", g.id, err)
	}
	if err := syncDir(filepath.Dir(g.path)); err != nil {
		return err
	}
	g.closed.Store(false)
	return nil
}

func (g *voteGate) refusal() error {
	g.refused.Add(1)
	return fmt.Errorf("member %s %w", g.id, errNoVoteYet)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// gatedTransport is raft's TCP transport with the vote gate in both directions: while the gate
// is closed, vote, pre-vote and leadership-transfer requests that arrive are answered with an
// error, and the member's own vote requests are not sent. Everything else (replication,
// snapshots, heartbeats, which take raft's fast path around Consumer) passes untouched.
type gatedTransport struct {
	*raft.NetworkTransport
	gate *voteGate
	in   chan raft.RPC
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

var (
	_ raft.Transport   = (*gatedTransport)(nil)
	_ raft.WithPreVote = (*gatedTransport)(nil)
	_ raft.WithClose   = (*gatedTransport)(nil)
)

func newGatedTransport(t *raft.NetworkTransport, g *voteGate) *gatedTransport {
	gt := &gatedTransport{NetworkTransport: t, gate: g, in: make(chan raft.RPC), stop: make(chan struct{})}
	gt.wg.Add(1)
	go gt.filter()
	return gt
}

// Consumer is what raft reads requests from: the transport's, less the vote requests the gate
// answers itself.
func (t *gatedTransport) Consumer() <-chan raft.RPC { return t.in }

func (t *gatedTransport) filter() {
	defer t.wg.Done()
	src := t.NetworkTransport.Consumer()
	for {
		var rpc raft.RPC
		select {
		case rpc = <-src:
		case <-t.stop:
			return
		}
		if t.gate.closed.Load() {
			switch rpc.Command.(type) {
			case *raft.RequestVoteRequest, *raft.RequestPreVoteRequest, *raft.TimeoutNowRequest:
				rpc.Respond(nil, t.gate.refusal())
				continue
			}
		}
		select {
		case t.in <- rpc:
		case <-t.stop:
			return
		}
	}
}

// RequestVote is not sent while the gate is closed.
func (t *gatedTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	if t.gate.closed.Load() {
		return fmt.Errorf("member %s asks no vote: %w", t.gate.id, errNoVoteYet)
	}
	return t.NetworkTransport.RequestVote(id, target, args, resp)
}

// RequestPreVote is not sent while the gate is closed.
func (t *gatedTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if t.gate.closed.Load() {
		return fmt.Errorf("member %s asks no pre-vote: %w", t.gate.id, errNoVoteYet)
	}
	return t.NetworkTransport.RequestPreVote(id, target, args, resp)
}

// Close stops the filter, then the transport.
func (t *gatedTransport) Close() error {
	t.once.Do(func() { close(t.stop) })
	t.wg.Wait()
	return t.NetworkTransport.Close()
}
