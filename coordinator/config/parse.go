// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"math"
	"strings"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/settings"
)

// edges parses auth.edges items, EDGE@REGION[+REGION...][=TOKEN].
func edges(r *settings.Reader, key string) []Edge {
	return bindings(r, key, "@", "EDGE@REGION[+REGION...][=TOKEN]", func(name, regions, token string) Edge {
		return Edge{Name: name, Regions: strings.Split(regions, "+"), Token: token}
	})
}

// admins parses auth.admins items, NAME:ROLE[=TOKEN]. The role is checked by Validate, which
// names the entry.
func admins(r *settings.Reader, key string) []Admin {
	return bindings(r, key, ":", "NAME:ROLE[=TOKEN]", func(name, role, token string) Admin {
		return Admin{Name: name, Role: api.Role(role), Token: token}
	})
}

// bindings parses the items of key, each NAME, sep, a value and an optional =TOKEN (form says
// so in an error); the token is everything after the first '=' and never reaches an error
// message.
func bindings[T any](r *settings.Reader, key, sep, form string, build func(name, value, token string) T) []T {
	var out []T
	for i, item := range r.List(key) {
		binding, token, _ := strings.Cut(item, "=")
		name, value, ok := strings.Cut(binding, sep)
		if !ok || name == "" || value == "" {
			r.Add(key, "item %d: expected %s, got %q", i, form, binding)
			return nil
		}
		out = append(out, build(name, value, token))
	}
	return out
}

// parse reads every key from r, then checks the whole; the error is the first key that does
// not read, or Validate's.
func parse(r *settings.Reader) (Config, error) {
	c := Config{
		NodeID:          r.String(KeyNodeID),
		DataDir:         r.String(KeyDataDir),
		Bootstrap:       r.Bool(KeyBootstrap),
		BootstrapExpect: r.Int(KeyBootstrapExpect),
		Join:            r.List(KeyJoin),
		Raft: Raft{
			Bind:               r.String(KeyRaftBind),
			Advertise:          r.String(KeyRaftAdvertise),
			TLS:                r.Bool(KeyRaftTLS),
			HeartbeatTimeout:   r.Duration(KeyRaftHeartbeat),
			ElectionTimeout:    r.Duration(KeyRaftElection),
			RoundTrip:          r.Duration(KeyRaftRoundTrip),
			LeaderLeaseTimeout: r.Duration(KeyRaftLeaderLease),
			CommitTimeout:      r.Duration(KeyRaftCommit),
			SnapshotInterval:   r.Duration(KeyRaftSnapInterval),
		},
		HTTP: HTTP{
			Bind:         r.String(KeyHTTPBind),
			Advertise:    strings.TrimRight(r.String(KeyHTTPAdvertise), "/"),
			MaxBodyBytes: r.Int64(KeyHTTPMaxBody, math.MinInt64, math.MaxInt64),
			Redirect:     r.Bool(KeyHTTPRedirect),
			Profiling:    r.Bool(KeyHTTPProfiling),

			MaxEventReaders:   r.Int(KeyHTTPEventReaders),
			EventWriteTimeout: r.Duration(KeyHTTPEventWrite),
		},
		Auth: Auth{
			EdgeTokens:  r.List(KeyEdgeTokens),
			Edges:       edges(r, KeyEdges),
			AdminToken:  r.String(KeyAdminToken),
			Admins:      admins(r, KeyAdmins),
			ClientCerts: r.Bool(KeyClientCerts),
			Insecure:    r.Bool(KeyInsecure),
			Readers:     r.List(KeyReaders),
		},
		TLS: TLS{Cert: r.String(KeyTLSCert), Key: r.String(KeyTLSKey), CA: r.String(KeyTLSCA), MemberName: r.String(KeyTLSMemberName)},
		Lease: Lease{
			TTL:              r.Duration(KeyLeaseTTL),
			Grace:            r.Duration(KeyLeaseGrace),
			MaxClockDrift:    r.Duration(KeyMaxClockDrift),
			LockWindow:       r.Duration(KeyLockWindow),
			MaxAttempts:      r.Int(KeyMaxAttempts),
			RetryBackoff:     r.Duration(KeyRetryBackoff),
			RetryBackoffMax:  r.Duration(KeyRetryBackoffMax),
			ReprovisionAfter: r.Duration(KeyReprovisionAfter),
			MaxWait:          r.Duration(KeyMaxWait),
			MaxNodes:         r.Int(KeyLeaseMaxNodes),
		},
		Ledger: Ledger{HistoryLength: r.Int(KeyHistoryLength), MaxFirstSeen: r.Int(KeyMaxFirstSeen)},
		Log:    Log{Level: strings.ToLower(r.String(KeyLogLevel)), Format: strings.ToLower(r.String(KeyLogFormat))},
	}
	snap := r.Int64(KeyRaftSnapThreshold, math.MinInt64, math.MaxInt64)
	manual, reprovision, flapping := r.List(KeyApprovalManual), r.String(KeyApprovalReprovision), r.String(KeyApprovalFlapping)
	if err := r.First(); err != nil {
		return Config{}, err
	}
	approval, err := parseApproval(manual, reprovision, flapping)
	if err != nil {
		return Config{}, err
	}
	c.Approval = approval
	if snap < 1 {
		return Config{}, fmt.Errorf("%s: %d must be at least 1", KeyRaftSnapThreshold, snap)
	}
	c.Raft.SnapshotThreshold = uint64(snap)
	if c.Raft.Advertise == "" {
		c.Raft.Advertise = c.Raft.Bind
	}
	if c.HTTP.Advertise == "" {
		c.HTTP.Advertise = defaultAdvertise(c.HTTP.Bind, c.TLS.Enabled())
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// defaultAdvertise derives the API URL from the bind address when the host is a concrete one.
func defaultAdvertise(bind string, tls bool) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://" + bind
}
