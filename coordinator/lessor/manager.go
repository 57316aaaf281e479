// SPDX-License-Identifier: Apache-2.0

package lessor

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

	mu sync.Mutex
	// enabled is set once this member's leadership is established (its extend committed); while
	// it is, its ledger time is anchorWall plus the monotonic time elapsed since anchorMono.
	enabled    bool
	cancel     context.CancelFunc
	done       chan struct{}
	anchorWall time.Time
	anchorMono time.Duration
	// seenStamp is the latest ledger time this member saw applied and seenMono its monotonic
	// reading then: at least seenMono's distance of real time has passed since that stamp.
	seenStamp time.Time
	seenMono  time.Duration
	// memHold is the hold on new grants after a recover this leadership keeps in memory while
	// the cluster protocol cannot record it (hold.go); zero otherwise.
	memHold Hold
	// regions maps a region to a channel closed when its waiting set may have grown; all is
	// closed on pause changes, restores and leadership changes.
	regions map[string]chan struct{}
	all     chan struct{}
	// acquiring counts the acquires running per region: the last to leave drops the region's
	// channel, so regions a caller invents leave nothing behind.
	acquiring map[string]int
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
		newID: randomID, regions: map[string]chan struct{}{}, all: make(chan struct{}), acquiring: map[string]int{},
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

// Stamp is the ledger time this member stamps into a command now: the anchor its leadership took
// plus the monotonic time since, so a step of the wall clock changes no stamp and ledger time
// never runs backwards. A member whose leadership is not established has no ledger time and
// refuses (ErrDisabled): a stamp of its wall clock could run ahead of the ledger's and, as its
// latest stamp, shorten every lease at the next promotion.
func (m *Manager) Stamp() (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.enabled {
		return time.Time{}, ErrDisabled
	}
	return m.anchorWall.Add(m.clock.Monotonic() - m.anchorMono), nil
}

// Enable is called by the leader loop after Barrier. It anchors this leadership's time, then
// gives every outstanding lease, from that time, a full TTL or what it had left at the previous
// leadership's last stamp if that is longer, plus the extension (the new leader cannot know when
// an edge last renewed, on the old leader's clock, nor translate its times), and only then starts
// stamping and expiring.
func (m *Manager) Enable(ctx context.Context) error {
	if m.Enabled() {
		return nil
	}
	last, err := m.ledger.LastStamp()
	if err != nil {
		return fmt.Errorf("read ledger time on promotion: %w", err)
	}
	mono := m.clock.Monotonic()
	anchor := m.anchor(last, mono)
	atLeast, err := m.promotionTTL(last)
	if err != nil {
		return fmt.Errorf("extend leases on promotion: %w", err)
	}
	if _, err := m.propose(ctx, &ledger.Extend{Now: anchor, AtLeast: atLeast}); err != nil {
		return fmt.Errorf("extend leases on promotion: %w", err)
	}
	// Before the first grant: after a recover, nodes a lost lease may hold are not offered.
	memHold, err := m.holdOnPromotion(ctx, anchor, mono, atLeast)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.enabled {
		return nil
	}
	loopCtx, cancel := context.WithCancel(ctx)
	m.enabled, m.cancel, m.done = true, cancel, make(chan struct{})
	m.anchorWall, m.anchorMono = anchor, mono
	m.memHold = memHold
	go m.expireLoop(loopCtx, m.done)
	m.broadcastLocked()
	return nil
}

// anchor is the ledger time this leadership starts from, at monotonic reading mono: the ledger's
// latest stamp last plus the real time this member has seen pass since it applied that stamp
// (none when it did not see it applied: it restarted since). Ledger time so carries over a
// change of leader without reading the new leader's wall clock: had it jumped to a wall clock
// ahead by some skew, every memory kept in ledger time (report and retry answers, backoffs,
// reprovision_after, the lock window) would end early by the skew. The wall clock is read only
// when the ledger has no time yet; after an outage of the whole cluster ledger time lags the
// wall clocks by the outage, which shortens no memory (logged).
func (m *Manager) anchor(last time.Time, mono time.Duration) time.Time {
	wall := m.clock.Now()
	if last.IsZero() {
		return wall
	}
	m.mu.Lock()
	at := last
	if m.seenStamp.Equal(last) && mono > m.seenMono {
		at = last.Add(mono - m.seenMono)
	}
	m.mu.Unlock()
	if d := wall.Sub(at); d > time.Second || d < -time.Second {
		m.log.Warn("ledger time differs from this member's wall clock; stamping from the ledger's", "wall_minus_ledger", d.Round(time.Millisecond))
	}
	return at
}

// Disable stops granting and expiring and forgets the leadership's time anchor; waiting Acquire
// calls return ErrDisabled.
func (m *Manager) Disable() {
	m.mu.Lock()
	if !m.enabled {
		m.mu.Unlock()
		return
	}
	m.enabled = false
	// A hold kept in memory is this leadership's; the next leader holds again from its own start.
	m.memHold = Hold{}
	cancel, done := m.cancel, m.done
	m.broadcastLocked()
	m.mu.Unlock()
	cancel()
	<-done
}

// Notify is the ledger's OnApply hook: it notes the ledger time applied and wakes Acquire calls
// waiting on changed regions.
func (m *Manager) Notify(a ledger.Applied) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.Stamp.After(m.seenStamp) {
		m.seenStamp, m.seenMono = a.Stamp, m.clock.Monotonic()
	}
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

// enter counts an acquire in region until leave.
func (m *Manager) enter(region string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acquiring[region]++
}

// leave ends an acquire in region; the last one drops the region's channel, which nobody waits
// on any more and so needs no close.
func (m *Manager) leave(region string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acquiring[region]--; m.acquiring[region] > 0 {
		return
	}
	delete(m.acquiring, region)
	delete(m.regions, region)
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
