// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/seed96588659/muster/edge/register"
	"github.com/seed96588659/muster/pkg/api"
)

// CoordinatorOptions configure the coordinator-backed source; start from
// DefaultCoordinatorOptions.
type CoordinatorOptions struct {
	// Client reaches the coordinator cluster (any members; it follows the leader).
	Client *api.Client
	// Edge and Region are this edge's name and region, as its credential is bound to them.
	Edge   string
	Region string
	// Heartbeat spaces the heartbeats that learn the operator's pause; default 250ms, so an
	// edge stops new attempts well under a second after the operator paused.
	Heartbeat time.Duration
	// ReportFor bounds how long one report is retried (same request id) before it is given up;
	// default two minutes, go-choria's lock window: a partitioned edge's results still reach
	// the ledger once the network heals.
	ReportFor time.Duration
	// Logger receives heartbeat failures; the default discards them.
	Logger *slog.Logger
	// Resend is how long a node the coordinators answered as waiting or leased is left out of
	// registrations (register.Queued); default register.DefaultResend.
	Resend time.Duration
	// Changed, when set, is called with the region's queue from every acquire and heartbeat
	// answer that carries one (the coordinator's ledger counts, every edge of the region
	// included); an answer without one (an older coordinator) calls nothing.
	Changed func(Counts)
	// CredentialRemedy is what the log line and the readiness check tell the operator to change
	// when the coordinators refuse the edge's credential (the app names its keys); empty takes a
	// generic one.
	CredentialRemedy string
	// CredentialBackoffMax bounds the wait between tries of a refused credential; default one
	// minute.
	CredentialBackoffMax time.Duration
}

// Coordinator is the cluster-mode source: it registers discovered nodes with the coordinator,
// takes leases on batches of this edge's region and reports results under their id and token.
type Coordinator struct {
	o      CoordinatorOptions
	queued *register.Queued
	// carries is the last acquire answer's CarriesReports: whether the leader takes reports
	// with an acquire.
	carries atomic.Bool
	// cred follows the coordinators' verdict on the edge's credential.
	cred credential
}

var _ ClusterSource = (*Coordinator)(nil)

// ClusterSource is what a cluster-mode edge asks of its source, the coordinators: leases,
// reports carried by acquires, the nodes an earlier run left unsettled, and the replicated pause.
type ClusterSource interface {
	Source
	Carrier
	Unsettler
	PauseWatcher
}

// Unsettler is a Source told of the nodes an earlier run of the edge sent calls to and never had
// a report of answered.
type Unsettler interface {
	// Unsettled registers ids at every sighting until Resend (register.Queued.Unsure): the earlier run's
	// report may still be on its way, held by the network, and change the node when it lands,
	// whatever this run's answers said.
	Unsettled(ids ...string)
}

// Unsettled keeps registering ids at every sighting until Resend (Unsettler).
func (c *Coordinator) Unsettled(ids ...string) { c.queued.Unsure(time.Now(), ids...) }

// PauseWatcher is a Source that also carries an operator pause of its own: the coordinator's
// replicated flag.
type PauseWatcher interface {
	// WatchPause calls changed with the source's pause flag after every answer until ctx ends.
	WatchPause(ctx context.Context, changed func(paused bool, at api.PauseMark))
}

// DefaultCoordinatorOptions returns the options every coordinator source starts from; Client,
// Edge and Region have no default.
func DefaultCoordinatorOptions() CoordinatorOptions {
	return CoordinatorOptions{Heartbeat: 250 * time.Millisecond, ReportFor: 2 * time.Minute, Resend: register.DefaultResend, Logger: slog.New(slog.DiscardHandler),
		CredentialBackoffMax: credentialBackoffMax}
}

// Validate refuses options the source cannot run with, naming the field.
func (o CoordinatorOptions) Validate() error {
	switch {
	case o.Client == nil:
		return errors.New("coordinator source: a coordinator client is required")
	case o.Edge == "":
		return errors.New("coordinator source: the edge name is required")
	case o.Region == "":
		return errors.New("coordinator source: the region is required")
	case o.Heartbeat <= 0:
		return fmt.Errorf("coordinator source: Heartbeat is %s, want a positive duration", o.Heartbeat)
	case o.ReportFor <= 0:
		return fmt.Errorf("coordinator source: ReportFor is %s, want a positive duration", o.ReportFor)
	case o.Resend <= 0:
		return fmt.Errorf("coordinator source: Resend is %s, want a positive duration", o.Resend)
	case o.Logger == nil:
		return errors.New("coordinator source: Logger is nil (slog.DiscardHandler discards)")
	case o.CredentialBackoffMax <= 0:
		return fmt.Errorf("coordinator source: CredentialBackoffMax is %s, want a positive duration", o.CredentialBackoffMax)
	}
	return nil
}

// NewCoordinator checks the options (start from DefaultCoordinatorOptions) and builds the source.
func NewCoordinator(o CoordinatorOptions) (*Coordinator, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Coordinator{o: o, queued: register.NewQueued(o.Resend)}, nil
}

// Register records found nodes in this edge's region and says how many now wait anew (added,
// or back to waiting after they were finished). The edge batches its discoveries, so one call
// carries up to a sweep's batch; the coordinator splits it into ledger commands. Nodes the
// coordinators answered as waiting or leased before are left out (register.Queued).
func (c *Coordinator) Register(ctx context.Context, found []register.Found) (int, error) {
	valid := make([]register.Found, 0, len(found))
	seen := make(map[string]bool, len(found))
	for _, f := range found {
		if f.Identity == "" || seen[f.Identity] {
			continue
		}
		seen[f.Identity] = true
		// A server announcing an identity the API does not take (a space, a '/', too long)
		// would only be refused there; it is left out here, where the operator reads why.
		if err := api.CheckNode(len(valid), api.RegisterNode{Identity: f.Identity}); err != nil {
			c.o.Logger.Warn("a node discovery found is not registered: the coordinator API does not take its identity", "identity", f.Identity, "error", err)
			continue
		}
		valid = append(valid, f)
	}
	if err := c.credentialWait(time.Now()); err != nil {
		return 0, fmt.Errorf("register %d nodes of %s: %w", len(valid), c.o.Region, err)
	}
	send, answered := c.queued.Filter(time.Now(), valid)
	if len(send) == 0 {
		return 0, nil
	}
	req := api.RegisterRequest{Region: c.o.Region, Edge: c.o.Edge, Nodes: make([]api.RegisterNode, len(send))}
	for i, f := range send {
		req.Nodes[i] = api.RegisterNode{Identity: f.Identity}
	}
	resp, err := c.o.Client.Register(ctx, req)
	if err = c.noteAnswer(err, true); err != nil {
		answered(nil)
		return 0, fmt.Errorf("register %d nodes of %s: %w", len(req.Nodes), c.o.Region, err)
	}
	answered(&resp)
	for _, r := range resp.Rejected {
		c.o.Logger.Warn("the coordinator did not register a node", "identity", r.Identity, "reason", r.Reason)
	}
	return resp.Added + resp.Requeued, nil
}

// Attempt timeouts of one member's answer: an acquire waits its long poll plus acquireSlack, a
// report reportAttempt (a Raft commit takes milliseconds; a member silent this long is left for
// another, which answers the same request id without applying it twice).
const (
	acquireSlack  = 5 * time.Second
	reportAttempt = 10 * time.Second
)

// Acquire asks the leader for a lease on up to max waiting nodes, long-polling up to wait.
func (c *Coordinator) Acquire(ctx context.Context, max int, wait time.Duration) (Grant, error) {
	g, _, err := c.AcquireCarrying(ctx, max, wait, nil)
	return g, err
}

// Carries reports whether the leader's last acquire answer said it takes reports with an acquire.
func (c *Coordinator) Carries() bool { return c.carries.Load() }

// AcquireCarrying is Acquire delivering ds with it (Carrier).
func (c *Coordinator) AcquireCarrying(ctx context.Context, max int, wait time.Duration, ds []Delivery) (Grant, []Delivered, error) {
	if max <= 0 {
		return Grant{}, nil, fmt.Errorf("acquire: max nodes %d is not positive", max)
	}
	if err := c.credentialWait(time.Now()); err != nil {
		return Grant{}, nil, fmt.Errorf("acquire in %s: %w", c.o.Region, err)
	}
	req := api.AcquireRequest{Edge: c.o.Edge, Region: c.o.Region, MaxNodes: max, Wait: api.Duration(wait)}
	for _, d := range ds {
		req.Reports = append(req.Reports, c.reportRequest(d))
	}
	// Each member gets the long poll plus acquireSlack: a leader lost without a reset is left
	// within the call (one request id over the attempts, so nothing is granted twice).
	resp, err := c.o.Client.Acquire(ctx, req, api.AttemptTimeout(wait+acquireSlack))
	if err = c.noteAnswer(err, true); err != nil {
		if len(ds) > 0 && api.IsCode(err, api.CodeUnknownField) {
			// A leader of an older build (a failover mid-upgrade): reports go alone again
			// until an answer says otherwise.
			c.carries.Store(false)
		}
		return Grant{}, nil, fmt.Errorf("acquire in %s: %w", c.o.Region, err)
	}
	c.carries.Store(resp.CarriesReports)
	answers := c.delivered(ds, req.Reports, resp.Reports)
	at := resp.PauseAt()
	g := Grant{Lease: resp.Lease, Paused: resp.Paused, PauseAt: at, Held: resp.Held.Std()}
	if g.Lease != nil {
		if err := c.check(*g.Lease, max); err != nil {
			// Never act on it, nor give any of it back: a report under it would be acting on
			// a lease the edge cannot trust. It expires on the coordinator after its TTL and
			// grace, and its nodes are offered again.
			return Grant{Paused: resp.Paused, PauseAt: at}, answers, err
		}
	}
	c.queue(resp.Queue)
	return g, answers, nil
}

// delivered matches the answers to the carried reports sent (Answers). The registration filter
// treats an answered report as Deliver treats its last try (Reported).
func (c *Coordinator) delivered(ds []Delivery, sent []api.ReportRequest, got []api.ReportAnswer) []Delivered {
	if len(ds) == 0 {
		return nil
	}
	out := Answers(sent, got)
	for i, d := range out {
		if d.Answered {
			c.settled(Identities(sent[i].Results), d.Err)
		}
	}
	return out
}

// reportRequest is the API request delivering d as this edge.
func (c *Coordinator) reportRequest(d Delivery) api.ReportRequest {
	return api.ReportRequest{LeaseID: d.Lease.ID, Token: d.Lease.Token, Edge: c.o.Edge, Region: c.o.Region, Results: c.fit(d.Results), RequestID: d.RequestID}
}

// queue hands an answer's region queue to Changed; nil (not sent) changes nothing, so the
// gauges of an edge talking to an older coordinator keep their value instead of reading 0.
func (c *Coordinator) queue(q *api.RegionQueue) {
	if q != nil && c.o.Changed != nil {
		c.o.Changed(Counts{Waiting: q.Waiting, Leased: q.Leased})
	}
}

// check refuses a lease for another edge or region (an edge only ever touches its own region)
// or of another shape than asked.
func (c *Coordinator) check(l api.Lease, max int) error {
	return CheckGrant(l, max, c.o.Edge, c.o.Region)
}

// CheckGrant refuses a coordinator's lease that is not this edge's (edge, region) or not of a
// shape it asked for (CheckShape).
func CheckGrant(l api.Lease, max int, edge, region string) error {
	if l.Edge != edge || l.Region != region {
		return fmt.Errorf("coordinator granted lease %s to %s in %s, but this edge is %s in %s: not acting on it: %w", l.ID, l.Edge, l.Region, edge, region, ErrGrantRefused)
	}
	if err := CheckShape(l, max); err != nil {
		return fmt.Errorf("coordinator granted %w", err)
	}
	return nil
}

// ErrGrantRefused is a granted lease the edge does not act on.
var ErrGrantRefused = errors.New("grant refused")

// CheckShape refuses a lease of more nodes than the max asked for (the edge's bound on leased
// hosts counts on it), one listing a node twice (two host flows would run on one node) or an
// empty identity. Any source's grant is checked, the edge's dispatch checks it again.
func CheckShape(l api.Lease, max int) error {
	if len(l.Nodes) > max {
		return fmt.Errorf("lease %s of %d nodes, but this edge asked for at most %d: not acting on it: %w", l.ID, len(l.Nodes), max, ErrGrantRefused)
	}
	seen := make(map[string]bool, len(l.Nodes))
	for _, id := range l.Nodes {
		switch {
		case id == "":
			return fmt.Errorf("lease %s with an empty node identity: not acting on it: %w", l.ID, ErrGrantRefused)
		case seen[id]:
			return fmt.Errorf("lease %s that lists %s twice: not acting on it: %w", l.ID, id, ErrGrantRefused)
		}
		seen[id] = true
	}
	return nil
}

// Renew extends a lease; a refusal that no retry can change (the lease expired, is unknown or
// carries another token) is ErrLeaseGone. Each member is given a sixth of the TTL to answer: a
// renewal is sent a third into the lease, so a leader lost without a reset costs one sixth and
// leaves the rest for the members that elect the next one (ctx, bounded by the lease's deadline,
// ends the call).
func (c *Coordinator) Renew(ctx context.Context, l api.Lease) (Grant, error) {
	var opts []api.CallOption
	if ttl := l.TTL.Std(); ttl > 0 {
		opts = append(opts, api.AttemptTimeout(ttl/6))
	}
	resp, err := c.o.Client.Renew(ctx, api.RenewRequest{LeaseID: l.ID, Token: l.Token, Edge: c.o.Edge, Region: c.o.Region}, opts...)
	if err = c.noteAnswer(err, false); err != nil {
		if Stale(err) {
			return Grant{}, fmt.Errorf("renew lease %s: %w: %w", l.ID, ErrLeaseGone, err)
		}
		return Grant{}, fmt.Errorf("renew lease %s: %w", l.ID, err)
	}
	return Grant{Lease: &resp.Lease, Paused: resp.Paused, PauseAt: resp.PauseAt()}, nil
}

// ErrLeaseGone is a renewal the coordinator refused for good.
var ErrLeaseGone = errors.New("lease is gone")

// Stale reports whether err is the coordinator refusing a lease it no longer holds for this
// edge under that token: retrying cannot change it.
func Stale(err error) bool {
	for _, code := range []api.Code{api.CodeUnknownLease, api.CodeTokenMismatch, api.CodeLeaseExpired, api.CodeWrongEdge, api.CodeWrongRegion} {
		if api.IsCode(err, code) {
			return true
		}
	}
	return errors.Is(err, ErrLeaseGone)
}

// Report delivers results under the lease's id and token, with a fresh request id (Deliver).
func (c *Coordinator) Report(ctx context.Context, l api.Lease, results []api.NodeResult) (api.ReportResponse, error) {
	return c.Deliver(ctx, NewDelivery(l, results))
}

// Deliver reports d. One request id is used for every try, so a report applied before its answer
// was lost (a leader failover) is answered with its first outcomes instead of being applied
// twice; tries go on for ReportFor while the cluster is unavailable.
func (c *Coordinator) Deliver(ctx context.Context, d Delivery) (resp api.ReportResponse, err error) {
	req := c.reportRequest(d)
	l := d.Lease
	// Forgotten once the report was answered, not before it was sent: a sighting registered
	// meanwhile is answered leased, and remembered so after the report would leave a node back in
	// provisioning mode out of the sweeps for Resend (the simulator's stuck check). A report
	// given up may still be applied later: its nodes are sent at every sighting until Resend.
	defer func() { c.settled(Identities(req.Results), err) }()
	results := req.Results
	deadline := time.Now().Add(c.o.ReportFor)
	delay := 100 * time.Millisecond
	for {
		resp, err := c.o.Client.Report(ctx, req, api.AttemptTimeout(reportAttempt))
		err = c.noteAnswer(err, false)
		if err == nil || Stale(err) || ctx.Err() != nil || !time.Now().Add(delay).Before(deadline) {
			if err != nil {
				return resp, fmt.Errorf("report %d results of lease %s: %w", len(results), l.ID, err)
			}
			return resp, nil
		}
		var ae *api.Error
		if errors.As(err, &ae) && !retryableStatus(ae.Status) {
			return resp, fmt.Errorf("report %d results of lease %s: %w", len(results), l.ID, err)
		}
		c.o.Logger.Warn("report not delivered yet, trying again", "lease", l.ID, "results", len(results), "error", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// settled tells the registration filter how a report of ids ended: applied or stale, they are
// forgotten; otherwise it may still be applied, and they are sent at every sighting until Resend.
func (c *Coordinator) settled(ids []string, err error) { Reported(c.queued, time.Now(), err, ids...) }

// fit makes every result one the API takes (api.FitResult), so no result is refused for a
// field the node sent (a 5,000-byte version string); each change is logged with the node.
func (c *Coordinator) fit(results []api.NodeResult) []api.NodeResult {
	out, copied := results, false
	for i, r := range results {
		fitted, notes := api.FitResult(r)
		if len(notes) == 0 {
			continue
		}
		if !copied {
			out, copied = slices.Clone(results), true // the caller's slice stays as it was
		}
		out[i] = fitted
		for _, n := range notes {
			c.o.Logger.Warn("a result is made to fit the coordinator API", "identity", r.Identity, "change", n)
		}
	}
	return out
}

// retryableStatus is an answer another try may change: the cluster between leaders or busy.
func retryableStatus(status int) bool {
	return status == 421 || status >= 500
}

// WatchPause heartbeats the leader every Heartbeat and hands each answer's pause flag to changed
// (and its region queue to the options' Changed).
// A heartbeat that fails changes nothing: the lease deadlines, not the heartbeat, decide whether
// the edge may go on. Each member is given a third of the heartbeat's time to answer, so a
// leader lost without a reset is left within the heartbeat: while paused the edge makes no
// other call, and would otherwise never learn from the next leader that the operator resumed.
func (c *Coordinator) WatchPause(ctx context.Context, changed func(paused bool, at api.PauseMark)) {
	t := time.NewTicker(c.o.Heartbeat)
	defer t.Stop()
	failing := false
	limit := max(4*c.o.Heartbeat, 2*time.Second)
	for {
		var resp api.HeartbeatResponse
		err := c.credentialWait(time.Now())
		if err == nil {
			hctx, cancel := context.WithTimeout(ctx, limit)
			resp, err = c.o.Client.Heartbeat(hctx, api.HeartbeatRequest{Edge: c.o.Edge, Region: c.o.Region}, api.AttemptTimeout(limit/3))
			cancel()
			err = c.noteAnswer(err, true)
		}
		switch {
		case err == nil:
			if failing {
				c.o.Logger.Info("coordinator heartbeat answered again", "leader", c.o.Client.Leader())
				failing = false
			}
			c.queue(resp.Queue)
			changed(resp.Paused, resp.PauseAt())
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrCredentialRefused):
			// Said once by the source when it was first refused.
		case !failing:
			c.o.Logger.Warn("coordinator heartbeat failed", "error", err)
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
