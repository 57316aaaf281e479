// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/seed96588659/muster/coordinator/raftnode"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/settings"
)

// Limits of the checked values.
const (
	minTokenLength = 16 // shorter tokens are guessable
	minMaxBody     = 1 << 10
	maxMaxBody     = 64 << 20
	maxAttempts    = 1000
	maxHistory     = 10000
	// goChoriaLockWindow is the provision agent's per-node lock (LockWindow in go-choria).
	goChoriaLockWindow = 2 * time.Minute
)

// Validate checks every value and how they fit together; the error names the key and the reason.
func (c *Config) Validate() error {
	if err := api.ValidateName(KeyNodeID, c.NodeID); err != nil {
		return err
	}
	if c.DataDir == "" {
		return fmt.Errorf("%s: must be set (Raft log, snapshots and ledger live there)", KeyDataDir)
	}
	if c.Bootstrap && len(c.Join) > 0 {
		return fmt.Errorf("%s and %s: a member either bootstraps a new cluster or joins one, not both", KeyBootstrap, KeyJoin)
	}
	for i, j := range c.Join {
		if err := api.ValidateBaseURL(fmt.Sprintf("%s[%d]", KeyJoin, i), j); err != nil {
			return err
		}
	}
	if err := c.validateBootstrapExpect(); err != nil {
		return err
	}
	if err := hostPort(KeyRaftBind, c.Raft.Bind, false); err != nil {
		return err
	}
	if err := hostPort(KeyRaftAdvertise, c.Raft.Advertise, true); err != nil {
		return err
	}
	if err := c.validateRaftTiming(); err != nil {
		return err
	}
	if err := hostPort(KeyHTTPBind, c.HTTP.Bind, false); err != nil {
		return err
	}
	if err := api.ValidateBaseURL(KeyHTTPAdvertise, c.HTTP.Advertise); err != nil {
		return err
	}
	if u, _ := url.Parse(c.HTTP.Advertise); u != nil {
		if err := hostPort(KeyHTTPAdvertise, u.Host, true); err != nil {
			return fmt.Errorf("%w (set %s to the URL others reach this member at)", err, KeyHTTPAdvertise)
		}
		if (u.Scheme == "https") != c.TLS.Enabled() {
			return fmt.Errorf("%s: %q uses %s but tls.cert is %q", KeyHTTPAdvertise, c.HTTP.Advertise, u.Scheme, c.TLS.Cert)
		}
	}
	if c.HTTP.MaxBodyBytes < minMaxBody || c.HTTP.MaxBodyBytes > maxMaxBody {
		return fmt.Errorf("%s: %d is outside %d..%d", KeyHTTPMaxBody, c.HTTP.MaxBodyBytes, minMaxBody, maxMaxBody)
	}
	if c.HTTP.MaxEventReaders < 1 {
		return fmt.Errorf("%s: %d, want at least 1", KeyHTTPEventReaders, c.HTTP.MaxEventReaders)
	}
	if c.HTTP.EventWriteTimeout < 100*time.Millisecond {
		return fmt.Errorf("%s: %s, want at least 100ms", KeyHTTPEventWrite, c.HTTP.EventWriteTimeout)
	}
	if err := c.validateTLS(); err != nil {
		return err
	}
	if err := c.validateAuth(); err != nil {
		return err
	}
	return c.validateLease()
}

// hostPort checks a host:port; advertised addresses must name a concrete host.
func hostPort(key, v string, concrete bool) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%s: %q is not host:port: %v", key, v, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%s: %q has an invalid port", key, v)
	}
	if concrete {
		if p == 0 {
			return fmt.Errorf("%s: %q: an advertised address needs a real port, not 0", key, v)
		}
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			return fmt.Errorf("%s: %q: an advertised address needs a concrete host, not a wildcard", key, v)
		}
	}
	return nil
}

// validateRaftTiming repeats hashicorp/raft's own checks so they fail here with the key's name.
func (c *Config) validateRaftTiming() error {
	r := c.Raft
	for _, d := range []struct {
		key string
		v   time.Duration
		min time.Duration
	}{
		{KeyRaftHeartbeat, r.HeartbeatTimeout, 5 * time.Millisecond},
		{KeyRaftElection, r.ElectionTimeout, 5 * time.Millisecond},
		{KeyRaftLeaderLease, r.LeaderLeaseTimeout, 5 * time.Millisecond},
		{KeyRaftCommit, r.CommitTimeout, time.Millisecond},
		{KeyRaftSnapInterval, r.SnapshotInterval, 5 * time.Millisecond},
	} {
		if d.v < d.min {
			return fmt.Errorf("%s: %s is below the minimum of %s", d.key, d.v, d.min)
		}
	}
	if r.LeaderLeaseTimeout > r.HeartbeatTimeout {
		return fmt.Errorf("%s: %s must not exceed %s (%s)", KeyRaftLeaderLease, r.LeaderLeaseTimeout, KeyRaftHeartbeat, r.HeartbeatTimeout)
	}
	if r.ElectionTimeout < r.HeartbeatTimeout {
		return fmt.Errorf("%s: %s must be at least %s (%s)", KeyRaftElection, r.ElectionTimeout, KeyRaftHeartbeat, r.HeartbeatTimeout)
	}
	return r.validateRoundTrip()
}

func (r Raft) validateRoundTrip() error {
	if r.RoundTrip < 0 {
		return fmt.Errorf("%s: %s is negative", KeyRaftRoundTrip, r.RoundTrip)
	}
	if r.RoundTrip == 0 {
		return nil
	}
	// The election timeout is at least the heartbeat timeout (validateRaftTiming), so the
	// heartbeat timeout is the one to check.
	if least := raftnode.MinRoundTrips * r.RoundTrip; r.HeartbeatTimeout < least {
		return fmt.Errorf("%s: %s is under %d round trips between members (%s %s): elections would flap; use at least %s", KeyRaftHeartbeat, r.HeartbeatTimeout, raftnode.MinRoundTrips, KeyRaftRoundTrip, r.RoundTrip, least)
	}
	return nil
}

func (c *Config) validateTLS() error {
	t := c.TLS
	if (t.Cert == "") != (t.Key == "") {
		return fmt.Errorf("%s and %s: give both or neither", KeyTLSCert, KeyTLSKey)
	}
	for _, f := range []struct{ key, path string }{{KeyTLSCert, t.Cert}, {KeyTLSKey, t.Key}, {KeyTLSCA, t.CA}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return fmt.Errorf("%s: %w", f.key, err)
		}
	}
	if t.CA != "" && t.Cert == "" {
		return fmt.Errorf("%s: set, but without %s the API does not serve TLS", KeyTLSCA, KeyTLSCert)
	}
	if !dnsName(t.MemberName) {
		return fmt.Errorf("%s: %q is not a DNS name (letters, digits, '-' and '.')", KeyTLSMemberName, t.MemberName)
	}
	if c.Raft.TLS && (t.Cert == "" || t.CA == "") {
		return fmt.Errorf("%s: needs %s, %s and %s", KeyRaftTLS, KeyTLSCert, KeyTLSKey, KeyTLSCA)
	}
	if c.Auth.ClientCerts && (t.Cert == "" || t.CA == "") {
		return fmt.Errorf("%s: needs %s, %s and %s to verify client certificates", KeyClientCerts, KeyTLSCert, KeyTLSKey, KeyTLSCA)
	}
	return nil
}

func (c *Config) validateAuth() error {
	a := c.Auth
	if err := a.refusePlaceholders(); err != nil {
		return err
	}
	seen := map[string]int{}
	for i, t := range a.EdgeTokens {
		if len(t) < minTokenLength {
			return fmt.Errorf("%s[%d]: shorter than %d characters", KeyEdgeTokens, i, minTokenLength)
		}
		if j, dup := seen[t]; dup {
			return fmt.Errorf("%s[%d]: repeats item %d", KeyEdgeTokens, i, j)
		}
		seen[t] = i
	}
	certs := map[string]int{}
	for i, e := range a.Edges {
		key := fmt.Sprintf("%s[%d]", KeyEdges, i)
		if err := api.ValidateName(key+" edge", e.Name); err != nil {
			return err
		}
		for _, r := range e.Regions {
			if err := api.ValidateName(key+" region", r); err != nil {
				return err
			}
		}
		if e.Token == "" {
			if !a.ClientCerts {
				return fmt.Errorf("%s (%s): no token, and %s is not set to bind its certificate", key, e.Name, KeyClientCerts)
			}
			if j, dup := certs[e.Name]; dup {
				return fmt.Errorf("%s: binds the certificate of %s again (item %d)", key, e.Name, j)
			}
			certs[e.Name] = i
			continue
		}
		if len(e.Token) < minTokenLength {
			return fmt.Errorf("%s (%s): token shorter than %d characters", key, e.Name, minTokenLength)
		}
		if j, dup := seen[e.Token]; dup {
			return fmt.Errorf("%s (%s): token repeats another edge credential (%d)", key, e.Name, j)
		}
		seen[e.Token] = i
	}
	if a.AdminToken != "" {
		if len(a.AdminToken) < minTokenLength {
			return fmt.Errorf("%s: shorter than %d characters", KeyAdminToken, minTokenLength)
		}
		if _, dup := seen[a.AdminToken]; dup {
			return fmt.Errorf("%s: equals an edge token; the admin token must open the admin API only", KeyAdminToken)
		}
	}
	if err := c.validateAdmins(); err != nil {
		return err
	}
	if a.Insecure {
		// Any caller, with any token or none, acts as any edge: credentials would only pretend
		// to bind, and a network must never reach it.
		for _, set := range []struct {
			key string
			on  bool
		}{{KeyEdges, len(a.Edges) > 0}, {KeyEdgeTokens, len(a.EdgeTokens) > 0}, {KeyClientCerts, a.ClientCerts}} {
			if set.on {
				return fmt.Errorf("%s contradicts %s: with it any caller, with or without a credential, acts as any edge; drop one", KeyInsecure, set.key)
			}
		}
		if !loopback(c.HTTP.Bind) {
			return fmt.Errorf("%s: %s %s is not a loopback address: any caller on the network would act as any edge (it is for local experiments)", KeyInsecure, KeyHTTPBind, c.HTTP.Bind)
		}
	}
	if len(a.Readers) > 0 && c.TLS.CA == "" {
		return fmt.Errorf("%s: needs %s, %s and %s to verify the readers' certificates", KeyReaders, KeyTLSCert, KeyTLSKey, KeyTLSCA)
	}
	for i, r := range a.Readers {
		if r == "" {
			return fmt.Errorf("%s[%d]: empty common name", KeyReaders, i)
		}
		for _, e := range a.Edges {
			if e.Token == "" && e.Name == r {
				return fmt.Errorf("%s[%d]: %s is bound to an edge by its certificate (%s); an edge's certificate does not read the admin API", KeyReaders, i, r, KeyEdges)
			}
		}
	}
	if len(a.EdgeTokens) == 0 && len(a.Edges) == 0 && !a.ClientCerts && !a.Insecure {
		return fmt.Errorf("%s and %s: empty, and neither %s nor %s is set: no edge could call the API", KeyEdges, KeyEdgeTokens, KeyClientCerts, KeyInsecure)
	}
	if len(c.Join) > 0 && a.AdminToken == "" {
		return fmt.Errorf("%s: needed to join through %s", KeyAdminToken, KeyJoin)
	}
	return nil
}

// refusePlaceholders refuses a credential left at the example value the packages ship: it passes
// every other rule, and anyone who read the package would hold it.
func (a Auth) refusePlaceholders() error {
	if settings.Placeholder(a.AdminToken) {
		return fmt.Errorf("%s: %s", KeyAdminToken, settings.PlaceholderReason)
	}
	for i, t := range a.EdgeTokens {
		if settings.Placeholder(t) {
			return fmt.Errorf("%s[%d]: %s", KeyEdgeTokens, i, settings.PlaceholderReason)
		}
	}
	for i, e := range a.Edges {
		if settings.Placeholder(e.Token) {
			return fmt.Errorf("%s[%d] (%s): the token %s", KeyEdges, i, e.Name, settings.PlaceholderReason)
		}
	}
	return nil
}

func (c *Config) validateLease() error {
	l := c.Lease
	switch {
	case l.TTL < time.Second:
		return fmt.Errorf("%s: %s is below 1s", KeyLeaseTTL, l.TTL)
	case l.Grace < 0:
		return fmt.Errorf("%s: %s is negative", KeyLeaseGrace, l.Grace)
	case l.MaxClockDrift < 0:
		return fmt.Errorf("%s: %s is negative", KeyMaxClockDrift, l.MaxClockDrift)
	case l.Grace < l.MaxClockDrift:
		// The grace is what covers the drift between the edge's count and the leader's.
		return fmt.Errorf("%s: %s is below %s (%s): the edge's and the leader's counts of a lease could overlap", KeyLeaseGrace, l.Grace, KeyMaxClockDrift, l.MaxClockDrift)
	case l.LockWindow < goChoriaLockWindow:
		return fmt.Errorf("%s: %s is below go-choria's provisioning lock of %s: a node could be offered to another edge while it still refuses that edge", KeyLockWindow, l.LockWindow, goChoriaLockWindow)
	case l.MaxWait > l.TTL/3:
		return fmt.Errorf("%s: %s leaves less than 2/3 of %s (%s) to an edge that counts its lease from its send; at most %s", KeyMaxWait, l.MaxWait, KeyLeaseTTL, l.TTL, l.TTL/3)
	case l.RetryBackoff < 0:
		return fmt.Errorf("%s: %s is negative", KeyRetryBackoff, l.RetryBackoff)
	case l.RetryBackoffMax < l.RetryBackoff:
		return fmt.Errorf("%s: %s is below %s (%s)", KeyRetryBackoffMax, l.RetryBackoffMax, KeyRetryBackoff, l.RetryBackoff)
	case l.ReprovisionAfter < 0:
		return fmt.Errorf("%s: %s is negative", KeyReprovisionAfter, l.ReprovisionAfter)
	case l.MaxWait < 0 || l.MaxWait > api.MaxWait:
		return fmt.Errorf("%s: %s is outside 0..%s", KeyMaxWait, l.MaxWait, api.MaxWait)
	case l.MaxNodes < 1 || l.MaxNodes > api.MaxLeaseNodes:
		return fmt.Errorf("%s: %d is outside 1..%d", KeyLeaseMaxNodes, l.MaxNodes, api.MaxLeaseNodes)
	case l.MaxAttempts < 1 || l.MaxAttempts > maxAttempts:
		return fmt.Errorf("%s: %d is outside 1..%d", KeyMaxAttempts, l.MaxAttempts, maxAttempts)
	case c.Ledger.HistoryLength < 1 || c.Ledger.HistoryLength > maxHistory:
		return fmt.Errorf("%s: %d is outside 1..%d", KeyHistoryLength, c.Ledger.HistoryLength, maxHistory)
	case c.Ledger.MaxFirstSeen < 0:
		return fmt.Errorf("%s: %d is negative (0 is no cap)", KeyMaxFirstSeen, c.Ledger.MaxFirstSeen)
	}
	if err := c.validateApproval(); err != nil {
		return err
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("%s: %q is not debug, info, warn or error", KeyLogLevel, c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return fmt.Errorf("%s: %q is not text or json", KeyLogFormat, c.Log.Format)
	}
	return nil
}

// String shows the credentials' count, never their value.
func (a Auth) String() string {
	admin := "unset"
	if a.AdminToken != "" {
		admin = "set"
	}
	return fmt.Sprintf("{edges:%d edge_tokens:%d admin_token:%s admins:%d client_certs:%t insecure:%t}", len(a.Edges), len(a.EdgeTokens), admin, len(a.Admins), a.ClientCerts, a.Insecure)
}

// GoString keeps %#v from printing the tokens either.
func (a Auth) GoString() string { return a.String() }

// dnsName reports whether s can be a certificate's DNS subject alternative name.
func dnsName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// loopback reports whether the host of host:port bind is a loopback address or localhost.
func loopback(bind string) bool {
	host, _, err := net.SplitHostPort(bind)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateBootstrapExpect checks bootstrap_expect: a count of voters, never with bootstrap (two
// ways to found a cluster), and with join naming the members it expects: every one of them
// counts the same members, so every one bootstraps the same configuration.
func (c *Config) validateBootstrapExpect() error {
	n := c.BootstrapExpect
	switch {
	case n == 0:
		return nil
	case n < 0:
		return fmt.Errorf("%s: %d, want at least 1 (the voters of the new cluster), or 0 for off", KeyBootstrapExpect, n)
	case c.Bootstrap:
		return fmt.Errorf("%s and %s: a member either bootstraps a one-member cluster or waits for %d members to bootstrap one, not both", KeyBootstrap, KeyBootstrapExpect, n)
	case n > 1 && (len(c.Join) < n-1 || len(c.Join) > n):
		return fmt.Errorf("%s: %d needs %s to name the %d members (this one may be among them), got %d address(es)", KeyBootstrapExpect, n, KeyJoin, n, len(c.Join))
	}
	return nil
}
