// SPDX-License-Identifier: Apache-2.0

package hostflow

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/choria-io/tokens"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/keys"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
)

// Features are choria-provisioner's features.* switches.
type Features struct {
	JWT     bool
	ED25519 bool
	PKI     bool
}

// Settings are the site settings the flow follows.
type Settings struct {
	Site     string
	Features Features
	// Interval is the discovery interval; a node last seen more than twice this long ago is skipped.
	Interval time.Duration
	Upgrade  upgrade.Settings
	// RestartSplay is the splay in seconds sent with restart; choria-provisioner sends 1.
	RestartSplay int
	// Signing decides which requests are signed; nil signs every request.
	Signing *SigningPolicy
	// DuplicateWindow is the least time between the last credential reply (jwt, gen25519,
	// gencsr) and configure, so that a second responder whose reply is slower than a rogue's is
	// seen before any key is used; zero sends configure as soon as it is ready.
	DuplicateWindow time.Duration
}

// Helper asks the site helper for a node's configuration.
type Helper interface {
	Run(ctx context.Context, req *helper.Request) (*helper.Response, error)
}

// JWTVerifier validates a node's provisioning JWT (keys.JWTVerifier).
type JWTVerifier interface {
	Validate(raw string) (*tokens.ProvisioningClaims, error)
}

// ServerSigner signs a server JWT for a node (keys.Signer).
type ServerSigner interface {
	Sign(req keys.ServerJWTRequest) (string, error)
}

// CSRValidator checks a node's CSR against its identity and the site's deny list (keys.DenyList).
type CSRValidator interface {
	ValidateCSR(identity, csrPEM string) (*x509.CertificateRequest, error)
}

// KeyEncrypter encrypts the helper's private key for the node (keys.EncryptPrivateKey).
type KeyEncrypter func(keyPEM, nodeECDHPublic string) (keys.EncryptedKey, error)

// Deps are what the flow calls out to. Helper is required; the others when their feature is on.
type Deps struct {
	Helper    Helper
	Verifier  JWTVerifier
	Signer    ServerSigner
	CSR       CSRValidator
	Encrypt   KeyEncrypter
	Metrics   *metrics.Registry
	Logger    *slog.Logger
	Now       func() time.Time
	Wrapper   *rpc.Wrapper
	Transport rpc.Transport
	// Token is the provisioning token every choria_provision action carries.
	Token string
	// Presence, when set, says whether identity still answers in provisioning mode (a targeted
	// discovery): a restart, release_update or shutdown whose reply was lost is then not tried
	// again into a node that already acted on it (rpc.Node.SetPresence).
	Presence func(ctx context.Context, identity string) (bool, error)
}

// Flow runs choria-provisioner's Host.Provision for one node at a time; it is safe for
// concurrent use by many workers.
type Flow struct {
	s Settings
	d Deps
}

// New checks that every dependency a configured feature needs is present.
func New(s Settings, d Deps) (*Flow, error) {
	switch {
	case d.Helper == nil:
		return nil, errors.New("host flow: a helper is required")
	case d.Wrapper == nil || d.Transport == nil:
		return nil, errors.New("host flow: an rpc wrapper and transport are required")
	case d.Metrics == nil:
		return nil, errors.New("host flow: a metrics registry is required")
	case s.Features.JWT && d.Verifier == nil:
		return nil, errors.New("host flow: features.jwt needs a JWT verifier (jwt_verify_cert)")
	case s.Features.ED25519 && d.Signer == nil:
		return nil, errors.New("host flow: features.ed25519 needs a server JWT signer (jwt_signing_key)")
	case s.Features.PKI && d.CSR == nil:
		return nil, errors.New("host flow: features.pki needs a CSR validator (cert_deny_list)")
	case s.Features.PKI && s.Features.ED25519:
		return nil, errors.New("host flow: features pki and ed25519 are exclusive")
	}
	if d.Encrypt == nil {
		d.Encrypt = keys.EncryptPrivateKey
	}
	if s.Features.ED25519 {
		s.Features.JWT = true
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Flow{s: s, d: d}, nil
}

// Host is one leased node handed to a worker.
type Host struct {
	Identity string
	// Seen is when discovery last saw the node in provisioning mode.
	Seen time.Time
	// Pause is true once the operator paused or the node's lease is no longer valid.
	Pause rpc.PauseSource
	// Record, when set, is called before restart, release_update or shutdown is sent (step
	// names which): after those only a report tells the lease source what the node did, so
	// the cluster edge makes the intent durable first. An error stops the flow before the call.
	// The restart's record runs while the configuration is sent, so its fsync overlaps that
	// round trip instead of following it; an intent whose call was never sent is closed by the
	// flow's report like any other, or settled by rediscovery after a crash.
	Record func(ctx context.Context, step string) error
	// Idle, when set, waits the time given without holding a worker (the edge lends it to
	// another host meanwhile); the flow waits out DuplicateWindow on it. Without it the flow
	// sleeps. An error (ctx ended) stops the flow before configure.
	Idle func(ctx context.Context, d time.Duration) error
}

// idle waits d on h.Idle, or sleeps.
func (h Host) idle(ctx context.Context, d time.Duration) error {
	if h.Idle != nil {
		return h.Idle(ctx, d)
	}
	return api.Sleep(ctx, d)
}

// record runs h.Record for step, if set.
func (h Host) record(ctx context.Context, step string) error {
	if h.Record == nil {
		return nil
	}
	if err := h.Record(ctx, step); err != nil {
		return fmt.Errorf("record %s of %s before sending it: %w (%w)", step, h.Identity, err, errNotRecorded)
	}
	return nil
}

// recordAsync starts h.record for step and returns the wait for its end.
func (h Host) recordAsync(ctx context.Context, step string) func() error {
	if h.Record == nil {
		return func() error { return nil }
	}
	done := make(chan error, 1)
	go func() { done <- h.record(ctx, step) }()
	return func() error { return <-done }
}

// errNotRecorded marks a call the flow did not send because its record failed: the node is
// left as before the call, so the host is given back rather than failed (the edge halts).
var errNotRecorded = errors.New("the call was not sent")

// run is the state of one flow: what earlier steps learnt, for later ones and the helper.
type run struct {
	node    *rpc.Node
	watch   *rpc.Responders
	req     helper.Request
	jwt     *rpc.JWT
	version string
	inv     upgrade.Inventory
	log     *slog.Logger
}

// Run provisions h in choria-provisioner's order and says how it ended.
func (f *Flow) Run(ctx context.Context, h Host) Result {
	start := f.d.Now()
	res := f.provision(ctx, h).printable()
	res.Identity = h.Identity
	res.Took = f.d.Now().Sub(start)
	if res.Err != nil && res.Outcome != Paused && res.Outcome != Deferred {
		f.d.Metrics.ProvisionErrors.WithLabelValues(f.s.Site).Inc()
	}
	return res
}

func (f *Flow) provision(ctx context.Context, h Host) Result {
	if res, ok := f.admit(h); !ok {
		return res
	}
	r := f.newRun(h)
	defer r.watch.Close()
	if res, ok := f.gather(ctx, r); !ok {
		return res
	}
	if res, ok := f.unique(r); !ok {
		// Before the helper signs anything for it.
		return res
	}
	resp, res, ok := f.askHelper(ctx, h, r)
	if !ok {
		return res
	}
	switch {
	case resp.Defer:
		return Result{Outcome: Deferred, Step: "helper", Err: fmt.Errorf("configuration deferred: %s", resp.Msg), Version: r.version}
	case resp.Shutdown:
		return f.shutdown(ctx, h, r, resp.Msg)
	}
	if res, ok := f.upgrade(ctx, h, r, resp); !ok {
		return res
	}
	return f.configure(ctx, h, r, resp)
}

// admit refuses a host that waited too long since discovery saw it (standalone) or whose pause
// source reads paused; false with the result to report.
func (f *Flow) admit(h Host) (Result, bool) {
	if waited := f.d.Now().Sub(h.Seen); !h.Seen.IsZero() && f.s.Interval > 0 && waited > 2*f.s.Interval {
		return Result{Outcome: Skipped, Err: fmt.Errorf("skipping node that's been waiting %v", waited.Round(time.Millisecond))}, false
	}
	if h.Pause == nil || h.Pause.Paused() {
		return Result{Outcome: Paused, Err: fmt.Errorf("provisioning %s is paused", h.Identity)}, false
	}
	return Result{}, true
}

func (f *Flow) newRun(h Host) *run {
	r := &run{
		node:  rpc.NewNode(f.d.Wrapper, f.d.Transport, h.Identity, f.d.Token, h.Pause),
		watch: rpc.NewResponders(f.d.Now),
		req:   helper.Request{Identity: h.Identity},
		log:   f.d.Logger.With("node", h.Identity),
	}
	r.node.SetResponders(r.watch)
	if f.d.Presence != nil {
		r.node.SetPresence(f.d.Presence)
	}
	return r
}

// gather runs the enabled fact steps in choria-provisioner's order (jwt, ed25519, inventory,
// csr), filling the helper's request; false with the result to report when one fails.
func (f *Flow) gather(ctx context.Context, r *run) (Result, bool) {
	steps := []struct {
		name string
		on   bool
		run  func(context.Context, *run) error
	}{
		{"jwt", f.s.Features.JWT, f.fetchJWT},
		{"ed25519", f.s.Features.ED25519, f.fetchED25519},
		{"inventory", true, f.fetchInventory},
		{"csr", f.s.Features.PKI, f.fetchCSR},
	}
	first := true
	for _, s := range steps {
		if !s.on {
			continue
		}
		if err := s.run(ctx, r); err != nil {
			if first && silent(err) {
				// Silence at the first call is what a node that left provisioning mode since it
				// was discovered looks like; rediscovery tells it from a slow one.
				return Result{Outcome: Unknown, Step: s.name, Err: err}, false
			}
			return f.failed(s.name, err, r), false
		}
		first = false
	}
	return Result{}, true
}

// askHelper runs the site helper on the gathered facts, unless the host was paused meanwhile.
func (f *Flow) askHelper(ctx context.Context, h Host, r *run) (*helper.Response, Result, bool) {
	if h.Pause.Paused() {
		return nil, Result{Outcome: Paused, Err: fmt.Errorf("provisioning is paused, cannot run the helper for %s", h.Identity), Version: r.version}, false
	}
	resp, err := f.d.Helper.Run(ctx, &r.req)
	if err != nil {
		f.d.Metrics.HelperErrors.WithLabelValues(f.s.Site).Inc()
		return nil, Result{Outcome: Failed, Step: "helper", Err: fmt.Errorf("could not invoke configure helper: %w", err), Version: r.version}, false
	}
	return resp, Result{}, true
}

// upgrade sends release_update when the node's version is not the target (the seed's upgrade
// decision); false with the result to report when the flow ends there.
func (f *Flow) upgrade(ctx context.Context, h Host, r *run, resp *helper.Response) (Result, bool) {
	send := upgrade.NodeSender(r.node)
	if h.Record != nil {
		send = func(ctx context.Context, repository, version string) error {
			if err := h.record(ctx, "release_update"); err != nil {
				return err
			}
			return upgrade.NodeSender(r.node)(ctx, repository, version)
		}
	}
	outcome, err := upgrade.Step(ctx, f.s.Upgrade, r.inv, resp.Upgrade, send, r.log)
	switch outcome {
	case upgrade.Sent:
		return Result{Outcome: UpgradeSent, Step: "release_update", Version: r.version, Target: resp.Upgrade}, false
	case upgrade.Stop:
		if errors.Is(err, rpc.ErrLeft) {
			// Its reply was lost, and the node is gone: it acted on release_update.
			return Result{Outcome: Settled("release_update"), Step: "release_update", Version: r.version, Target: resp.Upgrade}, false
		}
		if errors.Is(err, rpc.ErrUnanswered) {
			return Result{Outcome: Unknown, Step: "release_update", Err: err, Version: r.version, Target: resp.Upgrade}, false
		}
		res := f.failed("upgrade", err, r)
		res.Target = resp.Upgrade
		return res, false
	}
	return Result{}, true
}

// configure sends the helper's configuration while it journals the restart, then restarts the
// node.
func (f *Flow) configure(ctx context.Context, h Host, r *run, resp *helper.Response) Result {
	cfg, err := f.configuration(r, resp)
	if err != nil {
		return Result{Outcome: Failed, Step: "configure", Err: err, Version: r.version}
	}
	if res, ok := f.settle(ctx, h, r); !ok {
		return res
	}
	recorded := h.recordAsync(ctx, "restart")
	if _, err := r.node.Configure(ctx, cfg); err != nil {
		return f.failed("configure", fmt.Errorf("configuration failed: %w", err), r)
	}
	if err := recorded(); err != nil {
		return Result{Outcome: Paused, Step: "restart", Err: err, Version: r.version}
	}
	if _, err := r.node.Restart(ctx, f.s.RestartSplay); err != nil {
		if errors.Is(err, rpc.ErrLeft) {
			// Its reply was lost, and the node is gone: it restarted into its configuration.
			return Result{Outcome: Settled("restart"), Version: r.version}
		}
		if errors.Is(err, rpc.ErrUnanswered) {
			return Result{Outcome: Unknown, Step: "restart", Err: fmt.Errorf("restart failed: %w", err), Version: r.version}
		}
		return f.failed("restart", fmt.Errorf("restart failed: %w", err), r)
	}
	return Result{Outcome: Provisioned, Version: r.version}
}

// settle waits until DuplicateWindow has passed since the last credential reply (on h.Idle,
// without holding a worker), then refuses the node if a second responder answered meanwhile.
// The window covers a real node slower than a rogue: go-choria v0.30.0 answers gencsr only
// after generating an RSA key.
func (f *Flow) settle(ctx context.Context, h Host, r *run) (Result, bool) {
	if last := r.watch.LastReply(); !last.IsZero() {
		if wait := last.Add(f.s.DuplicateWindow).Sub(f.d.Now()); wait > 0 {
			if err := h.idle(ctx, wait); err != nil {
				return Result{Outcome: Paused, Step: "configure", Err: fmt.Errorf("stopped while waiting for a second responder to %s: %w", h.Identity, err), Version: r.version}, false
			}
		}
	}
	return f.unique(r)
}

// unique is false, with the result to report, once a second responder answered one of the
// node's credential-making actions.
func (f *Flow) unique(r *run) (Result, bool) {
	action := r.watch.Duplicate()
	if action == "" {
		return Result{}, true
	}
	return f.failed(action, &rpc.DuplicateResponderError{Action: action, Identity: r.node.Identity()}, r), false
}

func (f *Flow) shutdown(ctx context.Context, h Host, r *run, msg string) Result {
	if msg == "" {
		r.log.Warn("shutting down host based on helper output, no reason given")
	} else {
		r.log.Warn("shutting down host based on helper output", "reason", msg)
	}
	if err := h.record(ctx, "shutdown"); err != nil {
		return Result{Outcome: Paused, Step: "shutdown", Err: err, Version: r.version}
	}
	if err := r.node.Shutdown(ctx); err != nil {
		if errors.Is(err, rpc.ErrLeft) {
			return Result{Outcome: Settled("shutdown"), Version: r.version}
		}
		if errors.Is(err, rpc.ErrUnanswered) {
			return Result{Outcome: Unknown, Step: "shutdown", Err: err, Version: r.version}
		}
		return f.failed("shutdown", err, r)
	}
	return Result{Outcome: Shutdown, Version: r.version}
}

// failed classifies a step's error: the node's lock held by another caller and a pause are
// outcomes of their own; everything else failed.
func (f *Flow) failed(step string, err error, r *run) Result {
	res := Result{Outcome: Failed, Step: step, Err: err, Version: r.version}
	var dup *rpc.DuplicateResponderError
	switch {
	case errors.As(err, &dup):
		// Named by the action answered twice, whichever step noticed it.
		res.Outcome, res.Step = DuplicateResponder, dup.Action
	case errors.Is(err, rpc.ErrLocked):
		res.Outcome = LockHeld
	case errors.Is(err, rpc.ErrPaused), errors.Is(err, errNotRecorded):
		res.Outcome = Paused
	}
	return res
}

// silent is true when every try ended without a reply: at the flow's first call, what a node
// that left provisioning mode since it was discovered looks like.
func silent(err error) bool {
	var rc *rpc.ResponseCountError
	return errors.Is(err, rpc.ErrMaxTries) && errors.As(err, &rc) && rc.Count == 0
}
