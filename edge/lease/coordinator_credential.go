// SPDX-License-Identifier: Apache-2.0

package lease

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/pkg/api"
)

// ErrCredentialRefused is a call the coordinators refused for this edge's credential, or one not
// sent while the edge waits before trying the refused credential again. No retry of the same
// call can change it: the credential must change, on either side.
var ErrCredentialRefused = errors.New("the coordinators refuse this edge's credential")

// Retrying a refused credential: the first retry after credentialBackoff, doubling up to
// CoordinatorOptions.CredentialBackoffMax; a reminder is logged every credentialReminder while
// it stays refused.
const (
	credentialBackoff    = time.Second
	credentialBackoffMax = time.Minute
	credentialReminder   = 10 * time.Minute
)

// CredentialState is what the source knows of the coordinators' verdict on its credential.
type CredentialState struct {
	// Refused is set from a refusal until an answer accepts the credential again.
	Refused bool
	// Since is when the current refusal began; Err is the last refusal.
	Since time.Time
	Err   error
	// Refusals counts every refused answer since the source started.
	Refusals uint64
}

// credential tracks the refusals of the edge's credential: one log line when it is first refused
// (and a reminder now and then), none per call; calls that would only be refused again are not
// sent until the backoff ends.
type credential struct {
	mu       sync.Mutex
	state    CredentialState
	next     time.Time
	backoff  time.Duration
	reminded time.Time
}

// refusal is err when it is the coordinators refusing the credential: 401 on any call, or 403 on
// a call that names no lease (register, acquire, heartbeat: nothing but the credential's binding
// to this edge and region can be refused there; a renewal's 403 is a lease another edge holds).
func refusal(err error, leaseless bool) bool {
	var e *api.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == http.StatusUnauthorized || leaseless && e.Status == http.StatusForbidden
}

// credentialWait reports ErrCredentialRefused while the edge waits before trying a refused credential again.
func (c *Coordinator) credentialWait(now time.Time) error {
	c.cred.mu.Lock()
	defer c.cred.mu.Unlock()
	if c.cred.state.Refused && now.Before(c.cred.next) {
		return fmt.Errorf("%w (%v); trying again in %s", ErrCredentialRefused, c.cred.state.Err, c.cred.next.Sub(now).Round(time.Second))
	}
	return nil
}

// noteAnswer records what one call's answer said of the credential and returns err, marked
// ErrCredentialRefused when it is a refusal.
func (c *Coordinator) noteAnswer(err error, leaseless bool) error {
	now := time.Now()
	switch {
	case err == nil:
		c.credentialAccepted(now)
		return nil
	case refusal(err, leaseless):
		c.credentialRefused(now, err)
		return fmt.Errorf("%w: %w", ErrCredentialRefused, err)
	}
	// Another failure says nothing of the credential (a proxy or a stopping member may answer
	// before any authentication): only a success clears a refusal.
	return err
}

func (c *Coordinator) credentialRefused(now time.Time, err error) {
	c.cred.mu.Lock()
	defer c.cred.mu.Unlock()
	s := &c.cred.state
	s.Refusals++
	s.Err = err
	first := !s.Refused
	if first {
		s.Refused, s.Since, c.cred.backoff, c.cred.reminded = true, now, credentialBackoff, now
	} else {
		c.cred.backoff = min(2*c.cred.backoff, c.o.CredentialBackoffMax)
	}
	c.cred.next = now.Add(c.cred.backoff)
	switch {
	case first:
		c.o.Logger.Error("the coordinators refuse this edge's credential: it registers no node and takes no lease until they accept it, and reports not ready; "+c.remedy(),
			"edge", c.o.Edge, "region", c.o.Region, "error", err, "retrying_every_up_to", c.o.CredentialBackoffMax)
	case now.Sub(c.cred.reminded) >= credentialReminder:
		c.cred.reminded = now
		c.o.Logger.Error("the coordinators still refuse this edge's credential; "+c.remedy(),
			"edge", c.o.Edge, "region", c.o.Region, "refused_for", now.Sub(s.Since).Round(time.Second), "refusals", s.Refusals, "error", err)
	}
}

func (c *Coordinator) credentialAccepted(now time.Time) {
	c.cred.mu.Lock()
	defer c.cred.mu.Unlock()
	s := &c.cred.state
	if !s.Refused {
		return
	}
	c.o.Logger.Info("the coordinators accept this edge's credential again", "edge", c.o.Edge, "region", c.o.Region,
		"refused_for", now.Sub(s.Since).Round(time.Second))
	s.Refused, s.Err, s.Since = false, nil, time.Time{}
}

// remedy is what the operator changes, from the options or the keys the edge reads.
func (c *Coordinator) remedy() string {
	if c.o.CredentialRemedy != "" {
		return c.o.CredentialRemedy
	}
	return fmt.Sprintf("give the edge the credential the coordinators bind to edge %q in region %q (coordinator_token, or coordinator_tls_cert and coordinator_tls_key), or bind its credential there (auth.edges)", c.o.Edge, c.o.Region)
}

// Credential is the coordinators' verdict on this edge's credential so far.
func (c *Coordinator) Credential() CredentialState {
	c.cred.mu.Lock()
	defer c.cred.mu.Unlock()
	return c.cred.state
}

// CredentialReady is a readiness check: an error naming the refusal and the remedy while the
// coordinators refuse the credential.
func (c *Coordinator) CredentialReady() error {
	s := c.Credential()
	if !s.Refused {
		return nil
	}
	return fmt.Errorf("the coordinators refuse this edge's credential since %s (%v); %s", s.Since.UTC().Format(time.RFC3339), s.Err, c.remedy())
}

// CredentialMetrics are the source's muster_edge_ metrics of its credential, labelled with site
// as the edge's others: whether it is refused now, and how many answers refused it.
func CredentialMetrics(c *Coordinator, site string) []prometheus.Collector {
	labels := prometheus.Labels{"site": site}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "muster_edge_coordinator_credential_refused",
			Help: "1 while the coordinators refuse this edge's credential (401, or 403 for its edge and region): it is not ready", ConstLabels: labels},
			func() float64 {
				if c.Credential().Refused {
					return 1
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "muster_edge_coordinator_credential_refusals_total",
			Help: "Answers of the coordinators that refused this edge's credential", ConstLabels: labels},
			func() float64 { return float64(c.Credential().Refusals) }),
	}
}
