// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// reader collects the first error while values are read, so parse reads like a list of keys.
type reader struct {
	v   *viper.Viper
	err error
}

func (r *reader) fail(key, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...))
	}
}

func (r *reader) str(key string) string {
	switch x := r.v.Get(key).(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case int, int64, float64, bool:
		return fmt.Sprint(x)
	default:
		r.fail(key, "expected a single value, got %T", x)
		return ""
	}
}

func (r *reader) boolean(key string) bool {
	switch x := r.v.Get(key).(type) {
	case bool:
		return x
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			r.fail(key, "%q is not true or false", x)
		}
		return b
	default:
		r.fail(key, "expected true or false, got %v", x)
		return false
	}
}

func (r *reader) integer(key string) int64 {
	switch x := r.v.Get(key).(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case uint64:
		if x > math.MaxInt64 {
			r.fail(key, "%d is too large", x)
		}
		return int64(x)
	case float64:
		if x != math.Trunc(x) {
			r.fail(key, "%v is not a whole number", x)
			return 0
		}
		// YAML reads a whole number beyond int64 (or .inf) as a float, whose conversion to int64
		// is not defined: amd64 gives the minimum, arm64 saturates.
		if x < math.MinInt64 || x >= math.MaxInt64 {
			r.fail(key, "%v is out of range", x)
			return 0
		}
		return int64(x)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			r.fail(key, "%q is not a whole number", x)
		}
		return n
	default:
		r.fail(key, "expected a whole number, got %v", x)
		return 0
	}
}

// duration accepts only strings with a unit: "30" could mean seconds or nanoseconds.
func (r *reader) duration(key string) time.Duration {
	switch x := r.v.Get(key).(type) {
	case time.Duration:
		return x
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(x))
		if err != nil {
			r.fail(key, "%q is not a duration such as \"30s\" or \"500ms\"", x)
		}
		return d
	case int, int64, float64:
		r.fail(key, "%v has no unit; write a duration such as \"30s\"", x)
		return 0
	default:
		r.fail(key, "expected a duration such as \"30s\", got %v", x)
		return 0
	}
}

// list accepts a YAML list, or a string of items separated by commas or spaces (environment, flags).
func (r *reader) list(key string) []string {
	var raw []string
	switch x := r.v.Get(key).(type) {
	case nil:
	case []string:
		raw = x
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				r.fail(key, "item %d: expected a string, got %v", i, e)
				return nil
			}
			raw = append(raw, s)
		}
	case string:
		raw = strings.FieldsFunc(x, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\t' })
	default:
		r.fail(key, "expected a list, got %v", x)
		return nil
	}
	var out []string
	for _, s := range raw {
		// A flag repeated or given with commas arrives as one slice either way.
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// edges parses auth.edges items, EDGE@REGION[+REGION...][=TOKEN]; the token is everything after
// the first '=' and never reaches an error message.
func (r *reader) edges(key string) []Edge {
	var out []Edge
	for i, item := range r.list(key) {
		binding, token, _ := strings.Cut(item, "=")
		name, regions, ok := strings.Cut(binding, "@")
		if !ok || name == "" || regions == "" {
			r.fail(key, "item %d: expected EDGE@REGION[+REGION...][=TOKEN], got %q", i, binding)
			return nil
		}
		out = append(out, Edge{Name: name, Regions: strings.Split(regions, "+"), Token: token})
	}
	return out
}

func lookupEnv(name string) string { return strings.TrimSpace(os.Getenv(name)) }

// parse reads every key from v, then checks the whole.
func parse(v *viper.Viper) (Config, error) {
	r := &reader{v: v}
	c := Config{
		NodeID:    r.str(KeyNodeID),
		DataDir:   r.str(KeyDataDir),
		Bootstrap: r.boolean(KeyBootstrap),
		Join:      r.list(KeyJoin),
		Raft: Raft{
			Bind:               r.str(KeyRaftBind),
			Advertise:          r.str(KeyRaftAdvertise),
			TLS:                r.boolean(KeyRaftTLS),
			HeartbeatTimeout:   r.duration(KeyRaftHeartbeat),
			ElectionTimeout:    r.duration(KeyRaftElection),
			LeaderLeaseTimeout: r.duration(KeyRaftLeaderLease),
			CommitTimeout:      r.duration(KeyRaftCommit),
			SnapshotInterval:   r.duration(KeyRaftSnapInterval),
		},
		HTTP: HTTP{
			Bind:         r.str(KeyHTTPBind),
			Advertise:    strings.TrimRight(r.str(KeyHTTPAdvertise), "/"),
			MaxBodyBytes: r.integer(KeyHTTPMaxBody),
			Redirect:     r.boolean(KeyHTTPRedirect),
		},
		Auth: Auth{
			EdgeTokens:  r.list(KeyEdgeTokens),
			Edges:       r.edges(KeyEdges),
			AdminToken:  r.str(KeyAdminToken),
			ClientCerts: r.boolean(KeyClientCerts),
			Insecure:    r.boolean(KeyInsecure),
			Readers:     r.list(KeyReaders),
		},
		TLS: TLS{Cert: r.str(KeyTLSCert), Key: r.str(KeyTLSKey), CA: r.str(KeyTLSCA), MemberName: r.str(KeyTLSMemberName)},
		Lease: Lease{
			TTL:              r.duration(KeyLeaseTTL),
			Grace:            r.duration(KeyLeaseGrace),
			MaxClockDrift:    r.duration(KeyMaxClockDrift),
			LockWindow:       r.duration(KeyLockWindow),
			MaxAttempts:      int(r.integer(KeyMaxAttempts)),
			RetryBackoff:     r.duration(KeyRetryBackoff),
			RetryBackoffMax:  r.duration(KeyRetryBackoffMax),
			ReprovisionAfter: r.duration(KeyReprovisionAfter),
			MaxWait:          r.duration(KeyMaxWait),
			MaxNodes:         int(r.integer(KeyLeaseMaxNodes)),
		},
		Ledger: Ledger{HistoryLength: int(r.integer(KeyHistoryLength))},
		Log:    Log{Level: strings.ToLower(r.str(KeyLogLevel)), Format: strings.ToLower(r.str(KeyLogFormat))},
	}
	snap := r.integer(KeyRaftSnapThreshold)
	if r.err != nil {
		return Config{}, r.err
	}
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
