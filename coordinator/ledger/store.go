// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Bucket names; part of the on-disk format.
var (
	bucketMeta    = []byte("meta")
	bucketNodes   = []byte("nodes")
	bucketLeases  = []byte("leases")
	bucketWaiting = []byte("waiting")
	bucketCounts  = []byte("counts")
	bucketMembers = []byte("members")
	// bucketReports keeps applied reports' answers by lease id 0x00 request id, and the nodes
	// an operator's retry moved by 0x00 request id (no lease id is empty); bucketReportTimes
	// indexes both by time(8B BE ns) + that key so old ones are forgotten.
	bucketReports     = []byte("reports")
	bucketReportTimes = []byte("report_times")
	// bucketFailures keeps the newest FailureMemory failures by raft index (8B BE) and position
	// within that command (4B BE).
	bucketFailures = []byte("failures")
	// bucketFences indexes the nodes live leases still fence by node identity 0x00 lease id.
	bucketFences = []byte("fences")
	// bucketAudit keeps the newest AuditMemory operator actions by raft index (8B BE) and position.
	bucketAudit = []byte("audit")
	// bucketEvents is the event log: the newest EventMemory events by raft index and position.
	bucketEvents = []byte("events")

	keyAppliedIndex = []byte("applied_index")
	keyAppliedTerm  = []byte("applied_term")
	keyPause        = []byte("pause")
	// keyStamp is the latest leader time of any applied command (unix ns): the ledger's time.
	keyStamp = []byte("stamp")
	// keyAuditCount and keyEventCount are how many entries the audit and event logs hold.
	keyAuditCount = []byte("audit_n")
	keyEventCount = []byte("events_n")
	// keyOldFailureSeq numbered failures before they were keyed by log index; migrateFailures
	// removes it.
	keyOldFailureSeq = []byte("failure_seq")
)

var allBuckets = [][]byte{bucketMeta, bucketNodes, bucketLeases, bucketWaiting, bucketCounts, bucketMembers, bucketReports, bucketReportTimes, bucketFailures, bucketFences, bucketAudit, bucketEvents}

// laterBuckets were added after the first format: a snapshot of an older member lacks them, and
// opening the restored file creates them empty.
var laterBuckets = [][]byte{bucketFailures, bucketFences, bucketAudit, bucketEvents}

// Options tune how a Ledger opens its file.
type Options struct {
	// NoSync skips fsync on each apply. The Raft log is fsynced anyway and the ledger is rebuilt
	// from it after a crash that loses unsynced pages of a process kill cannot lose; see DESIGN.md.
	NoSync bool
	// Logger receives the ledger's few log lines; nil discards them.
	Logger *slog.Logger
	// OnApply, when set, is called after each committed batch with what changed. It runs on the
	// FSM goroutine and must not block.
	OnApply func(Applied)
	// EventMemory is how many events the event log keeps, EventMemory when 0. It is ledger
	// content: every member of a cluster must keep the same number (tests lower it, to fall
	// behind the log without writing 100,000 events).
	EventMemory int
}

// Applied tells the leader-side machinery what a batch of commands changed.
type Applied struct {
	Index uint64
	// Regions whose set of waiting nodes gained members (registered, returned or expired).
	Regions []string
	// PauseChanged is true when the operator pause flag was written.
	PauseChanged bool
	// Restored is true when the whole ledger was replaced from a snapshot.
	Restored bool
	// Stamp is the latest leader time of the batch's commands; zero when none carried one.
	Stamp time.Time
}

// Ledger is the node ledger in one bbolt file. It is the Raft FSM (see FSM) and answers
// read-only queries concurrently with Apply.
type Ledger struct {
	path string
	opts Options
	log  *slog.Logger

	// mu guards db: Restore swaps the file under the write lock; every other use holds the read lock.
	mu sync.RWMutex
	db *bolt.DB
	// applied caches the applied index; only the FSM goroutine writes it.
	applied atomic.Uint64
	// commits counts the transactions that applied log entries (one per batch).
	commits atomic.Uint64
}

// Commits is how many transactions applied log entries since the ledger was opened: each costs a
// bbolt commit and its fsyncs whatever number of entries it held.
func (l *Ledger) Commits() uint64 { return l.commits.Load() }

// Open opens or creates the ledger file at path.
func Open(path string, opts Options) (*Ledger, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Ledger{path: path, opts: opts, log: opts.Logger}
	db, err := l.openDB(path, true)
	if err != nil {
		return nil, err
	}
	l.db = db
	if err := l.loadApplied(); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// openDB opens the file at path, which must hold a protocol this build runs on (checkStored; at
// start also one not below OldestProtocol), and creates the buckets it lacks.
func (l *Ledger) openDB(path string, atStart bool) (*bolt.DB, error) {
	switch err := checkIntact(path); {
	case errors.Is(err, ErrInUse):
		return nil, fmt.Errorf("ledger %s: %w (is a member running on this directory?); leave the file where it is", path, err)
	case err != nil:
		return nil, fmt.Errorf("ledger %s is damaged: %w; stop this member, move it aside (mv %s %s.damaged) and start the member again: it rebuilds the ledger from its Raft snapshot and log (docs/cluster.md)", path, err, path, path)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:        openTimeout,
		NoSync:         l.opts.NoSync,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
		// A large initial mmap keeps long snapshot read transactions from blocking writers that
		// would otherwise have to remap a growing file.
		InitialMmapSize: 1 << 30,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("ledger %s: %w (is a member running on this directory?); leave the file where it is", path, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		// Before anything is written: a file refused is left exactly as it was.
		if err := checkStored(tx.Bucket(bucketMeta), atStart); err != nil {
			return err
		}
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
		return migrateFailures(tx)
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	return db, nil
}

// Path is the ledger file's path.
func (l *Ledger) Path() string { return l.path }

// Close closes the file; later calls fail with ErrClosed.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db == nil {
		return nil
	}
	err := l.db.Close()
	l.db = nil
	if err != nil {
		return fmt.Errorf("close ledger %s: %w", l.path, err)
	}
	return nil
}

func (l *Ledger) view(fn func(tx *bolt.Tx) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.db == nil {
		return ErrClosed
	}
	return l.db.View(fn)
}

// AppliedIndex returns the index and term of the last log entry applied to the ledger.
func (l *Ledger) AppliedIndex() (index, term uint64, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		index = getUint(m.Get(keyAppliedIndex))
		term = getUint(m.Get(keyAppliedTerm))
		return nil
	})
	return index, term, err
}

func getUint(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

func putUint(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// waitKey orders a region's waiting nodes by the time they become eligible, then identity, so a
// grant reads only the eligible prefix.
func waitKey(n *Node) []byte {
	k := make([]byte, 0, len(n.Region)+1+8+len(n.Identity))
	k = append(k, n.Region...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(max(n.NotBefore.UnixNano(), 0)))
	return append(k, n.Identity...)
}

// waitValue carries the lock so a grant can skip a node without decoding its record.
func waitValue(n *Node) []byte {
	v := make([]byte, 0, 8+len(n.LockEdge))
	v = binary.BigEndian.AppendUint64(v, uint64(max(n.LockUntil.UnixNano(), 0)))
	return append(v, n.LockEdge...)
}

func countKey(region string, s api.NodeState) []byte {
	k := make([]byte, 0, len(region)+1+len(s))
	k = append(k, region...)
	k = append(k, 0)
	return append(k, s...)
}

func getNode(b *bolt.Bucket, id string) (*Node, error) {
	v := b.Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	n, err := decodeNode(id, v)
	if err != nil {
		return nil, fmt.Errorf("decode node %q: %w", id, err)
	}
	return n, nil
}

func getLease(b *bolt.Bucket, id string) (*Lease, error) {
	v := b.Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	ls := &Lease{}
	if err := json.Unmarshal(v, ls); err != nil {
		return nil, fmt.Errorf("decode lease %q: %w", id, err)
	}
	return ls, nil
}

// removeFile removes a file that may not exist.
func removeFile(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (l *Ledger) loadApplied() error {
	return l.db.View(func(tx *bolt.Tx) error {
		l.applied.Store(getUint(tx.Bucket(bucketMeta).Get(keyAppliedIndex)))
		return nil
	})
}
