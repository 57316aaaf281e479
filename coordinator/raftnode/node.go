// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// Node is one running member's Raft: the log, snapshots and transport, applying to an FSM it is
// given.
type Node struct {
	cfg    Config
	log    *slog.Logger
	raft   *raft.Raft
	trans  *gatedTransport
	gate   *voteGate
	stream *streamLayer
	store  *raftboltdb.BoltStore
	logs   raft.LogStore
	snaps  *raft.FileSnapshotStore
	fsm    FSM

	observer  *raft.Observer
	obsCh     chan raft.Observation
	leaderCh  chan bool
	dropped   atomic.Uint64
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// Open starts a member's Raft from cfg.Dir, creating it if missing, applying entries to fsm. The
// caller keeps fsm open until Shutdown has returned.
func Open(cfg Config, fsm FSM) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RaftLogLevel == 0 {
		cfg.RaftLogLevel = slog.LevelWarn
	}
	rc, err := cfg.raftConfig()
	if err != nil {
		return nil, err
	}
	rc.Logger = newHCLogger("raft", cfg.Logger, cfg.RaftLogLevel)
	if fsm == nil {
		return nil, fmt.Errorf("member %s: no state machine", cfg.ID)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("member %s: raft dir: %w", cfg.ID, err)
	}
	n := &Node{cfg: cfg, log: cfg.Logger, fsm: fsm, leaderCh: make(chan bool, 1), stop: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			n.closeResources()
		}
	}()

	n.store, err = openLogStore(cfg.Dir, cfg.NoSync)
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", cfg.ID, err)
	}
	n.snaps, err = raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, rc.Logger.Named("snapshots"))
	if err != nil {
		return nil, fmt.Errorf("member %s: snapshot store: %w", cfg.ID, err)
	}
	if err := n.catchUpFromSnapshot(); err != nil {
		return nil, fmt.Errorf("member %s: %w", cfg.ID, err)
	}
	has, err := raft.HasExistingState(n.store, n.store, n.snaps)
	if err != nil {
		return nil, fmt.Errorf("member %s: check state: %w", cfg.ID, err)
	}
	bootstrap := cfg.Bootstrap || len(cfg.BootstrapPeers) > 0
	if !has && !bootstrap && !cfg.Join {
		return nil, fmt.Errorf("member %s: %w: %s has no Raft state and neither bootstrap nor join is set. "+
			"A member that lost its data directory must not come back as the voter it was: start it with "+
			"--join <API URL of a running member> (config key join), and the cluster takes it in as a non-voter "+
			"and promotes it once it has caught up; the members of a new cluster start with --bootstrap-expect N and "+
			"--join of all N (config key bootstrap_expect), a single member with --bootstrap",
			cfg.ID, ErrNoState, cfg.Dir)
	}
	lost, err := lostVotes(n.store)
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", cfg.ID, err)
	}
	// A member bootstrapping a new cluster has no votes to lose; any other without its log and
	// term (a new member, or one that lost its disk) waits behind the vote gate.
	n.gate, err = openVoteGate(cfg.ID, cfg.Dir, lost && !(bootstrap && !has))
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", cfg.ID, err)
	}
	memberName := cfg.MemberName
	if memberName == "" {
		memberName = DefaultMemberName
	}
	stream, err := newStreamLayer(cfg.Bind, cfg.Advertise, cfg.Dial, cfg.TLS, memberName, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("member %s: %w", cfg.ID, err)
	}
	n.stream = stream
	n.trans = newGatedTransport(raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: stream, MaxPool: 3, Timeout: 10 * time.Second, Logger: rc.Logger.Named("transport"),
	}), n.gate)
	if n.gate.closed.Load() {
		n.log.Info("this member has no vote until the leader promotes it (it started without Raft state)", "learner_since", n.gate.since())
	}

	if bootstrap {
		if !has {
			conf := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: rc.LocalID, Address: n.trans.LocalAddr()}}}
			if len(cfg.BootstrapPeers) > 0 {
				conf.Servers = nil
				for _, p := range cfg.BootstrapPeers {
					conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Address)})
				}
			}
			if err := raft.BootstrapCluster(rc, n.store, n.store, n.snaps, n.trans, conf); err != nil {
				return nil, fmt.Errorf("member %s: bootstrap: %w", cfg.ID, err)
			}
		}
	}
	logs, err := raft.NewLogCache(logCacheEntries, n.store)
	if err != nil {
		return nil, fmt.Errorf("member %s: raft log cache: %w", cfg.ID, err)
	}
	n.logs = logs
	if cfg.WrapLogs != nil {
		n.logs = cfg.WrapLogs(logs)
	}
	// A learner whose promotion is in its log on disk votes from the start (votegate.go).
	if applied, _, err := n.fsm.AppliedIndex(); err != nil {
		return nil, fmt.Errorf("member %s: %w", cfg.ID, err)
	} else if err := n.checkPromotion(applied); err != nil {
		return nil, fmt.Errorf("member %s: %w", cfg.ID, err)
	}
	n.raft, err = raft.NewRaft(rc, n.fsm, n.logs, n.store, n.snaps, n.trans)
	if err != nil {
		return nil, fmt.Errorf("member %s: start raft: %w", cfg.ID, err)
	}
	n.observe()
	ok = true
	return n, nil
}

// lostVotes reports whether raft.db holds neither a log nor a term: the member either never
// had Raft state or lost the file that records its votes and acknowledgements (snapshots alone
// do not record them).
func lostVotes(store *raftboltdb.BoltStore) (bool, error) {
	last, err := store.LastIndex()
	if err != nil {
		return false, fmt.Errorf("read raft log: %w", err)
	}
	// raft's own key for the current term (raft.go keyCurrentTerm).
	term, err := store.GetUint64([]byte("CurrentTerm"))
	if err != nil && !errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return false, fmt.Errorf("read raft term: %w", err)
	}
	return last == 0 && term == 0, nil
}

// catchUpFromSnapshot restores the newest snapshot into the FSM when its storage is older (a lost
// or replaced ledger file); raft itself is told not to restore on start, because an FSM that is
// already current would be rewritten for nothing.
func (n *Node) catchUpFromSnapshot() error {
	metas, err := n.snaps.List()
	if err != nil {
		return fmt.Errorf("list snapshots: %w", err)
	}
	if len(metas) == 0 {
		return nil
	}
	applied, _, err := n.fsm.AppliedIndex()
	if err != nil {
		return err
	}
	if applied >= metas[0].Index {
		return nil
	}
	_, rc, err := n.snaps.Open(metas[0].ID)
	if err != nil {
		return fmt.Errorf("open snapshot %s: %w", metas[0].ID, err)
	}
	n.log.Info("state machine is behind the newest snapshot; restoring it", "applied", applied, "snapshot", metas[0].Index)
	if err := n.fsm.Restore(rc); err != nil {
		return fmt.Errorf("restore snapshot %s: %w", metas[0].ID, err)
	}
	return nil
}

// ID is this member's server id.
func (n *Node) ID() string { return n.cfg.ID }

// Addr is the Raft address other members dial.
func (n *Node) Addr() string { return string(n.trans.LocalAddr()) }

// BoundAddr is the address the transport listens on.
func (n *Node) BoundAddr() string { return n.stream.Listener.Addr().String() }

// ElectionTimeout is the configured election timeout (the lease extension on promotion).
func (n *Node) ElectionTimeout() time.Duration { return n.cfg.Timeouts.withDefaults().Election }

// HeartbeatTimeout is the follower's heartbeat timeout in use.
func (n *Node) HeartbeatTimeout() time.Duration { return n.cfg.Timeouts.withDefaults().Heartbeat }

// Apply replicates data and returns the FSM's response; an error response of the FSM is returned
// as the error. ctx's deadline bounds the enqueue (default 10s); the wait for the result ends
// early when ctx is done or the member shuts down (the entry may then still be applied).
func (n *Node) Apply(ctx context.Context, data []byte) (any, uint64, error) {
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	f := n.raft.Apply(data, timeout)
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("apply: %w (%v)", ErrTimeout, ctx.Err())
	case <-n.stop:
		return nil, 0, fmt.Errorf("apply: %w", ErrShutdown)
	}
	if err != nil {
		return nil, 0, mapRaftError("apply", err)
	}
	resp := f.Response()
	if err, ok := resp.(error); ok {
		return nil, f.Index(), err
	}
	return resp, f.Index(), nil
}

// Barrier waits until every entry committed before it is applied to the FSM.
func (n *Node) Barrier(timeout time.Duration) error {
	return mapRaftError("barrier", n.raft.Barrier(timeout).Error())
}

// VerifyLeader checks with a quorum that this member still leads.
func (n *Node) VerifyLeader() error {
	return mapRaftError("verify leader", n.raft.VerifyLeader().Error())
}

// IsLeader reports whether this member believes it leads.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the leader's Raft address and id, empty when unknown.
func (n *Node) Leader() (addr, id string) {
	a, i := n.raft.LeaderWithID()
	return string(a), string(i)
}

// State is raft's state name (Leader, Follower, Candidate, Shutdown).
func (n *Node) State() string { return n.raft.State().String() }

// Term is the current term.
func (n *Node) Term() uint64 { return n.raft.CurrentTerm() }

// LastContact is when this member last heard from a leader (raft's own reading of the system
// clock, with its monotonic part); the zero time if it never has.
func (n *Node) LastContact() time.Time { return n.raft.LastContact() }

// AppliedIndex is the last index raft applied to the FSM.
func (n *Node) AppliedIndex() uint64 { return n.raft.AppliedIndex() }

// CommitIndex is the last index known committed.
func (n *Node) CommitIndex() uint64 { return n.raft.CommitIndex() }

// Servers returns the latest Raft configuration.
func (n *Node) Servers() ([]raft.Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, mapRaftError("configuration", err)
	}
	return f.Configuration().Servers, nil
}

// Join adds a member (a voter unless nonVoter); joining again with the same id and address is a no-op.
func (n *Node) Join(id, addr string, nonVoter bool) error {
	if id == "" || addr == "" {
		return fmt.Errorf("join: member id and raft address are required (got %q, %q)", id, addr)
	}
	servers, err := n.Servers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		if string(s.ID) == id && string(s.Address) == addr && (s.Suffrage == raft.Voter) == !nonVoter {
			return nil
		}
		if string(s.ID) == id || string(s.Address) == addr {
			// A member that came back with a new address (or id) is replaced, not duplicated.
			if err := n.raft.RemoveServer(s.ID, 0, 0).Error(); err != nil {
				return mapRaftError(fmt.Sprintf("join %s: remove old entry %s", id, s.ID), err)
			}
		}
	}
	var f raft.IndexFuture
	if nonVoter {
		f = n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0)
	} else {
		f = n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0)
	}
	return mapRaftError(fmt.Sprintf("join %s at %s", id, addr), f.Error())
}

// Remove takes a member out of the configuration.
func (n *Node) Remove(id string) error {
	if id == "" {
		return errors.New("remove: member id is required")
	}
	return mapRaftError("remove "+id, n.raft.RemoveServer(raft.ServerID(id), 0, 0).Error())
}

// Snapshot takes a snapshot now and returns its metadata.
func (n *Node) Snapshot() (*raft.SnapshotMeta, error) {
	f := n.raft.Snapshot()
	if err := f.Error(); err != nil {
		return nil, mapRaftError("snapshot", err)
	}
	meta, rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("open snapshot: %w", err)
	}
	rc.Close()
	return meta, nil
}

// LeadershipChanges delivers true when this member gains leadership (again, in a later term,
// too) and false when it loses it. Values are coalesced: read the latest with Term and IsLeader
// when one arrives.
func (n *Node) LeadershipChanges() <-chan bool { return n.leaderCh }

// DroppedObservations counts leadership notifications coalesced because nobody was reading.
func (n *Node) DroppedObservations() uint64 { return n.dropped.Load() }

// observe registers a raft observer rather than using LeaderCh, which drops signals; a slow
// ticker catches any observation raft itself dropped, and looks for a learner's promotion in its
// own log (raft observes no configuration change on a follower).
func (n *Node) observe() {
	n.obsCh = make(chan raft.Observation, 16)
	n.observer = raft.NewObserver(n.obsCh, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.LeaderObservation, raft.RaftState:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(n.observer)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		last, lastTerm := false, uint64(0)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var gateErr string
		for {
			select {
			case <-n.stop:
				return
			case <-n.obsCh:
			case <-tick.C:
				if err := n.watchPromotion(); err != nil && err.Error() != gateErr {
					n.log.Warn("look for this member's promotion in its own log", "error", err)
					gateErr = err.Error()
				}
			}
			// The term is read first: leadership lost and won again between two looks shows as
			// a new term, and the new term needs its own Barrier and lease extension.
			term := n.Term()
			now := n.IsLeader()
			if now == last && (!now || term == lastTerm) {
				continue
			}
			last, lastTerm = now, term
			select {
			case n.leaderCh <- now:
			default:
				// Replace the unread value with the newest one.
				select {
				case <-n.leaderCh:
					n.dropped.Add(1)
				default:
				}
				n.leaderCh <- now
			}
		}
	}()
}

// Shutdown stops raft and closes its stores, not the FSM; the files stay for a restart.
func (n *Node) Shutdown() error {
	var err error
	n.closeOnce.Do(func() {
		close(n.stop)
		if n.raft != nil {
			n.raft.DeregisterObserver(n.observer)
			err = mapRaftError("shutdown", n.raft.Shutdown().Error())
		}
		n.wg.Wait()
		if cerr := n.closeResources(); err == nil {
			err = cerr
		}
	})
	return err
}

func (n *Node) closeResources() error {
	var errs []error
	if n.trans != nil {
		errs = append(errs, n.trans.Close())
	}
	if n.store != nil {
		errs = append(errs, n.store.Close())
	}
	return errors.Join(errs...)
}

// Learner reports whether this member still waits behind the vote gate: it started without Raft
// state and the leader has not yet said it is a voter again.
func (n *Node) Learner() bool { return n.gate.closed.Load() }

// LearnerSince is the configuration index at which the leader last named this member a
// non-voter, 0 before it did.
func (n *Node) LearnerSince() uint64 { return n.gate.since() }

// SetLearnerSince records durably that the leader named this member a non-voter at configuration
// index idx.
func (n *Node) SetLearnerSince(idx uint64) error { return n.gate.setSince(idx) }

// Promoted opens the vote gate for good: the leader has said this member is a voter again.
func (n *Node) Promoted() error {
	if !n.gate.closed.Load() {
		return nil
	}
	if err := n.gate.open(); err != nil {
		return err
	}
	n.log.Info("promoted to voter: this member votes again")
	return nil
}

// watchPromotion is checkPromotion while raft runs: entries raft has applied count too, before
// the state machine's storage records them.
func (n *Node) watchPromotion() error {
	if !n.gate.closed.Load() || n.gate.since() == 0 {
		return nil
	}
	applied, _, err := n.fsm.AppliedIndex()
	if err != nil {
		return err
	}
	return n.checkPromotion(max(applied, n.raft.AppliedIndex()))
}

// checkPromotion opens the vote gate when this member's own log shows the promotion whose
// answer it never received: named a non-voter at since, entries through since applied, and its
// latest configuration a voter entry of its own after since (votegate.go, "A promotion whose
// answer is lost").
func (n *Node) checkPromotion(applied uint64) error {
	since := n.gate.since()
	if !n.gate.closed.Load() || since == 0 || applied < since {
		return nil
	}
	conf, idx, err := n.latestConfiguration()
	if err != nil {
		return err
	}
	if !promotedIn(conf, idx, raft.ServerID(n.cfg.ID), n.trans.LocalAddr(), since, applied) {
		return nil
	}
	if err := n.gate.open(); err != nil {
		return err
	}
	n.log.Info("promotion seen in this member's own log: this member votes again", "learner_since", since, "config_index", idx, "applied", applied)
	return nil
}

// VotesRefused counts the vote requests this member answered with a refusal while it had no vote.
func (n *Node) VotesRefused() uint64 { return n.gate.refused.Load() }

// Configuration returns the latest Raft configuration in this member's log and its log index.
func (n *Node) Configuration() ([]raft.Server, uint64, error) {
	conf, idx, err := n.latestConfiguration()
	if err != nil {
		return nil, 0, err
	}
	return conf.Servers, idx, nil
}

// latestConfiguration reads the newest configuration from this member's log, else its newest
// snapshot, as raft does at start: raft v1.7.3's GetConfiguration gives the configuration but
// always index 0. A compaction between the two reads (the log then starts above the entry
// looked for) is read again.
func (n *Node) latestConfiguration() (raft.Configuration, uint64, error) {
	var err error
	for range 3 {
		var conf raft.Configuration
		var idx uint64
		if conf, idx, err = n.readLatestConfiguration(); !errors.Is(err, raft.ErrLogNotFound) {
			return conf, idx, err
		}
	}
	return raft.Configuration{}, 0, err
}

func (n *Node) readLatestConfiguration() (raft.Configuration, uint64, error) {
	var conf raft.Configuration
	var floor uint64 // the newest snapshot's configuration index: raft reads the log above it
	metas, err := n.snaps.List()
	if err != nil {
		return conf, 0, fmt.Errorf("latest configuration: list snapshots: %w", err)
	}
	if len(metas) > 0 {
		conf, floor = metas[0].Configuration, metas[0].ConfigurationIndex
	}
	first, err := n.logs.FirstIndex()
	if err != nil {
		return conf, 0, fmt.Errorf("latest configuration: read raft log: %w", err)
	}
	last, err := n.logs.LastIndex()
	if err != nil {
		return conf, 0, fmt.Errorf("latest configuration: read raft log: %w", err)
	}
	for i := last; i > floor && i >= first && i > 0; i-- {
		// A fresh Log each time: raft's LogCache hands out a cached entry's own Data array, and
		// decoding the next entry from raft.db into the same struct would write into it, changing
		// an entry raft has yet to apply or send (logcache_test.go).
		var entry raft.Log
		if err := n.logs.GetLog(i, &entry); err != nil {
			return conf, 0, fmt.Errorf("latest configuration: read raft log entry %d: %w", i, err)
		}
		if entry.Type == raft.LogConfiguration {
			return raft.DecodeConfiguration(entry.Data), i, nil
		}
	}
	return conf, floor, nil
}

// InConfiguration reports whether this member's own latest configuration holds it under its id
// and address.
func (n *Node) InConfiguration() (bool, error) {
	servers, _, err := n.Configuration()
	if err != nil {
		return false, err
	}
	for _, s := range servers {
		if string(s.ID) == n.cfg.ID && s.Address == n.trans.LocalAddr() {
			return true, nil
		}
	}
	return false, nil
}

// AddLearner makes member id a non-voter at addr, replacing any entry of that id or address
// (a voter entry of a member that lost its state included), and returns the index of the
// configuration that holds it, committed.
func (n *Node) AddLearner(id, addr string) (uint64, error) {
	if id == "" || addr == "" {
		return 0, fmt.Errorf("add learner: member id and raft address are required (got %q, %q)", id, addr)
	}
	servers, _, err := n.Configuration()
	if err != nil {
		return 0, err
	}
	for _, s := range servers {
		if string(s.ID) == id || string(s.Address) == addr {
			if err := n.raft.RemoveServer(s.ID, 0, 0).Error(); err != nil {
				return 0, mapRaftError(fmt.Sprintf("add learner %s: remove old entry %s", id, s.ID), err)
			}
		}
	}
	f := n.raft.AddNonvoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0)
	if err := f.Error(); err != nil {
		return 0, mapRaftError(fmt.Sprintf("add learner %s at %s", id, addr), err)
	}
	return f.Index(), nil
}

// Promote makes the non-voter id at addr a voter and returns the index of the configuration
// that holds it, committed.
func (n *Node) Promote(id, addr string) (uint64, error) {
	f := n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 0)
	if err := f.Error(); err != nil {
		return 0, mapRaftError(fmt.Sprintf("promote %s at %s", id, addr), err)
	}
	return f.Index(), nil
}
