// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/metrics"
)

// ErrDisabled means this member's lease manager is not enabled: it is not the leader, or its
// leadership is not established yet.
var ErrDisabled = errors.New("lease manager disabled on this member")

// Clock is a member's two readings of time. Now (the wall clock, which NTP or an operator may step)
// is read once per leadership, to anchor the ledger's time; Monotonic (never stepped) measures
// everything else, so a step of the wall clock changes no lease.
type Clock interface {
	Now() time.Time
	// Monotonic is the time elapsed since an arbitrary origin of this process; it is only ever
	// compared with itself, never with another member's.
	Monotonic() time.Duration
}

// Propose replicates a command and returns the ledger's result or its refusal.
type Propose func(ctx context.Context, cmd ledger.Command) (any, error)

// Config tunes leases.
type Config struct {
	// TTL is a lease's lifetime from grant or renewal.
	TTL time.Duration
	// Grace is added to expires_at before a lease is expired; it must cover the clock drift allowed.
	Grace time.Duration
	// MaxNodes caps the nodes of one lease.
	MaxNodes int
	// MaxWait caps an Acquire long poll.
	MaxWait time.Duration
	// ExpiryInterval is how often the leader looks for expired leases.
	ExpiryInterval time.Duration
	// Recheck is how often a waiting Acquire looks again for nodes whose backoff ended.
	Recheck time.Duration
	// Extension is added to a full TTL for every lease when this member becomes leader (one
	// election timeout).
	Extension time.Duration
	// ReportMemory is how long a report's answer is kept for a retry with the same request id.
	ReportMemory time.Duration
	// Policy is stamped into the commands that move nodes.
	Policy ledger.Policy
}

// DefaultConfig is used for zero fields of a Config.
func DefaultConfig() Config {
	return Config{
		TTL: 30 * time.Second, Grace: 5 * time.Second, MaxNodes: 1000, MaxWait: 30 * time.Second,
		ExpiryInterval: time.Second, Recheck: 250 * time.Millisecond, Extension: time.Second,
		ReportMemory: 15 * time.Minute, Policy: ledger.DefaultPolicy(),
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.TTL <= 0 {
		c.TTL = d.TTL
	}
	if c.Grace < 0 {
		c.Grace = 0
	}
	if c.MaxNodes <= 0 {
		c.MaxNodes = d.MaxNodes
	}
	c.MaxNodes = min(c.MaxNodes, ledger.MaxBatch)
	if c.MaxWait <= 0 {
		c.MaxWait = d.MaxWait
	}
	if c.ExpiryInterval <= 0 {
		c.ExpiryInterval = d.ExpiryInterval
	}
	if c.Recheck <= 0 {
		c.Recheck = d.Recheck
	}
	if c.ReportMemory <= 0 {
		c.ReportMemory = d.ReportMemory
	}
	if c.Policy == (ledger.Policy{}) {
		c.Policy = d.Policy
	}
	return c
}

// Manager runs leases on the leader. Followers keep one too, disabled: "paused by definition".
type Manager struct {
	cfg     Config
	ledger  *ledger.Ledger
	propose Propose
	clock   Clock
	metrics *metrics.Metrics
	log     *slog.Logger
	newID   func() string

	mu      sync.Mutex
	enabled bool
	cancel  context.CancelFunc
	done    chan struct{}
	// anchored is set while this member leads: its ledger time is anchorWall plus the monotonic
	// time elapsed since anchorMono.
	anchored   bool
	anchorWall time.Time
	anchorMono time.Duration
	// regions maps a region to a channel closed when its waiting set may have grown; all is
	// closed on pause changes, restores and leadership changes.
	regions map[string]chan struct{}
	all     chan struct{}
}

// New creates a disabled manager.
func New(cfg Config, l *ledger.Ledger, propose Propose, clock Clock, m *metrics.Metrics, log *slog.Logger) (*Manager, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("lease manager: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{
		cfg: cfg, ledger: l, propose: propose, clock: clock, metrics: m, log: log,
		newID: randomID, regions: map[string]chan struct{}{}, all: make(chan struct{}),
	}, nil
}

// Config returns the effective configuration.
func (m *Manager) Config() Config { return m.cfg }

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "l-" + hex.EncodeToString(b[:])
}

// Enabled reports whether this member grants leases now.
func (m *Manager) Enabled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.enabled
}

// Now is the time this member stamps into commands. While it leads, that is the ledger time it
// anchored at when its leadership began (its wall clock, or the latest stamp in the ledger if
// that is later) plus the monotonic time since: a step of the wall clock during a leadership
// changes no stamp, and the ledger's time never runs backwards across leaders.
func (m *Manager) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.anchored {
		return m.clock.Now()
	}
	return m.anchorWall.Add(m.clock.Monotonic() - m.anchorMono)
}

// Enable is called by the leader loop after Barrier. It anchors this leadership's time, then
// gives every outstanding lease, from that time, a full TTL or what it had left at the previous
// leadership's last stamp if that is longer, plus the extension (the new leader cannot know when
// an edge last renewed, on the old leader's clock, nor translate its times), and only then starts
// expiring.
func (m *Manager) Enable(ctx context.Context) error {
	last, err := m.ledger.LastStamp()
	if err != nil {
		return fmt.Errorf("read ledger time on promotion: %w", err)
	}
	m.mu.Lock()
	if !m.enabled {
		wall, mono := m.clock.Now(), m.clock.Monotonic()
		if last.After(wall) {
			m.log.Warn("ledger time is ahead of this member's wall clock; stamping from the ledger's", "ahead", last.Sub(wall))
			wall = last
		}
		m.anchored, m.anchorWall, m.anchorMono = true, wall, mono
	}
	m.mu.Unlock()
	atLeast, err := m.promotionTTL(last)
	if err != nil {
		return fmt.Errorf("extend leases on promotion: %w", err)
	}
	if _, err := m.propose(ctx, &ledger.Extend{Now: m.Now(), AtLeast: atLeast}); err != nil {
		return fmt.Errorf("extend leases on promotion: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.enabled {
		return nil
	}
	loopCtx, cancel := context.WithCancel(ctx)
	m.enabled, m.cancel, m.done = true, cancel, make(chan struct{})
	go m.expireLoop(loopCtx, m.done)
	m.broadcastLocked()
	return nil
}

// Disable stops granting and expiring and forgets the leadership's time anchor; waiting Acquire
// calls return ErrDisabled.
func (m *Manager) Disable() {
	m.mu.Lock()
	m.anchored = false
	if !m.enabled {
		m.mu.Unlock()
		return
	}
	m.enabled = false
	cancel, done := m.cancel, m.done
	m.broadcastLocked()
	m.mu.Unlock()
	cancel()
	<-done
}

// Notify is the ledger's OnApply hook: it wakes Acquire calls waiting on changed regions.
func (m *Manager) Notify(a ledger.Applied) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.PauseChanged || a.Restored {
		m.broadcastLocked()
		return
	}
	for _, r := range a.Regions {
		if ch, ok := m.regions[r]; ok {
			close(ch)
			delete(m.regions, r)
		}
	}
}

func (m *Manager) broadcastLocked() {
	close(m.all)
	m.all = make(chan struct{})
	for r, ch := range m.regions {
		close(ch)
		delete(m.regions, r)
	}
}

func (m *Manager) subscribe(region string) (regionCh, all <-chan struct{}, enabled bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok := m.regions[region]
	if !ok {
		ch = make(chan struct{})
		m.regions[region] = ch
	}
	return ch, m.all, m.enabled
}

func (m *Manager) checkEnabled() error {
	if !m.Enabled() {
		return ErrDisabled
	}
	return nil
}
