// SPDX-License-Identifier: Apache-2.0

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/choria-io/go-choria/choria"
	"github.com/spf13/viper"
)

// parse reads every key from v into a Config, applies the anchor's derived defaults, enforces
// the minimums that hold for file, environment and flags, and validates the result.
func parse(v *viper.Viper) (*Config, error) {
	r := &reader{v: v}
	c := &Config{
		Workers:                    r.integer("workers"),
		Interval:                   r.duration("interval"),
		LogFile:                    r.str("logfile"),
		LogLevel:                   strings.ToLower(r.str("loglevel")),
		Helper:                     r.str("helper"),
		Token:                      r.str("token"),
		LifecycleComponent:         r.str("lifecycle_component"),
		Insecure:                   r.boolean("choria_insecure"),
		Site:                       r.str("site"),
		MonitorPort:                r.integer("monitor_port"),
		BrokerPort:                 r.integer("broker_port"),
		BrokerProvisioningPassword: r.str("broker_provisioning_password"),
		CertDenyList:               r.list("cert_deny_list"),
		JWTVerifyCert:              r.str("jwt_verify_cert"),
		JWTSigningKey:              r.str("jwt_signing_key"),
		JWTSigningToken:            r.str("jwt_signing_token"),
		ServerJWTValidity:          r.duration("server_jwt_validity"),
		RegoPolicy:                 r.str("rego_policy"),
		LeaderElection:             r.boolean("leader_election"),
		UpgradesRepository:         r.str("upgrades_repository"),
		UpgradesOptional:           r.boolean("upgrades_optional"),
		Features: Features{
			PKI:      r.boolean("features.pki"),
			JWT:      r.boolean("features.jwt"),
			ED25519:  r.boolean("features.ed25519"),
			Upgrades: r.boolean("features.upgrades"),
		},
		ChoriaConfig:         r.str("choria_config"),
		ChoriaIdentity:       r.str("choria_identity"),
		BrokerConnectTimeout: r.duration("broker_connect_timeout"),
		Region:               r.str("region"),
		EdgeName:             r.str("edge_name"),
		HelperTimeout:        r.duration("helper_timeout"),
		HelperRate:           r.integer("helper_rate"),
		HelperPersistent:     r.boolean("helper_persistent"),
		HelperEnvironment:    r.list("helper_environment"),
		LogFormat:            strings.ToLower(r.str("log_format")),
		RequestSigning:       strings.ToLower(r.str("request_signing")),
		PauseToken:           r.str("pause_token"),
		BatchSize:            r.integer("batch_size"),
		MonitorBind:          r.str("monitor_bind"),
		Coordinators:         r.list("coordinators"),
		CoordinatorToken:     r.str("coordinator_token"),
		CoordinatorTLSCert:   r.str("coordinator_tls_cert"),
		CoordinatorTLSKey:    r.str("coordinator_tls_key"),
		CoordinatorTLSCA:     r.str("coordinator_tls_ca"),
		LeaseMargin:          r.duration("lease_margin"),
		StateDir:             r.str("state_dir"),
		CallHistory:          r.str("call_history"),
	}
	r.section("features")

	// The anchor's derived defaults: an empty or zero value means the default.
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.LifecycleComponent == "" {
		c.LifecycleComponent = DefaultLifecycleComponent
	}
	if len(c.CertDenyList) == 0 {
		c.CertDenyList = DefaultCertDenyList()
	}
	if c.Features.ED25519 {
		c.Features.JWT = true
	}
	if c.Region == "" {
		c.Region = c.Site
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.LogFormat == "" {
		c.LogFormat = LogText
	}
	if c.RequestSigning == "" {
		c.RequestSigning = SigningAuto
	}

	if !r.errs.seen["interval"] && c.Interval < MinInterval {
		r.errs.add("interval", "%s is below the minimum of 1m (the minimum protects the broker from discovery floods; valid examples: 5m, 1h)", c.Interval)
	}
	r.errs.merge(c.validate())
	if err := errors.Join(r.errs.errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// reader turns viper's values (YAML types from the file, strings from the environment, typed
// values from flags) into Go values, recording one error per key that does not read.
type reader struct {
	v    *viper.Viper
	errs fieldErrors
}

// get returns the value of key, nil when it is unset or blank, so a blank value means the default.
func (r *reader) get(name string) any {
	val := r.v.Get(name)
	if s, ok := val.(string); ok && strings.TrimSpace(s) == "" {
		if k, ok := lookupKey(name); ok && k.def != nil {
			return k.def
		}
		return nil
	}
	return val
}

func (r *reader) str(name string) string {
	switch x := r.get(name).(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case map[string]any:
		r.errs.add(name, "expected a string, got a map (%s)", describeMap(x))
	default:
		// As the anchor, whose JSON decoding refused a number for a string: a YAML number can
		// lose digits (a hex key such as 12e45...), so it must be quoted.
		r.errs.add(name, "expected a string, got %T %v (quote the value)", x, x)
	}
	return ""
}

func (r *reader) boolean(name string) bool {
	switch x := r.get(name).(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			r.errs.add(name, "%q is not true or false", x)
		}
		return b
	default:
		r.errs.add(name, "expected true or false, got %T %v", x, x)
		return false
	}
}

func (r *reader) integer(name string) int {
	var n int64
	switch x := r.get(name).(type) {
	case nil:
		return 0
	case int:
		return x
	case int64:
		n = x
	case uint64:
		if x > math.MaxInt32 {
			r.errs.add(name, "%d is too large", x)
			return 0
		}
		n = int64(x)
	case float64:
		if x != math.Trunc(x) {
			r.errs.add(name, "%v is not a whole number", x)
			return 0
		}
		// YAML reads a whole number beyond int64 (or .inf) as a float, whose conversion to an
		// integer is not defined: checked here, so the error shows the value as written.
		if x < math.MinInt32 || x > math.MaxInt32 {
			r.errs.add(name, "%v is out of range", x)
			return 0
		}
		n = int64(x)
	case string:
		var err error
		n, err = strconv.ParseInt(strings.TrimSpace(x), 10, 32)
		if err != nil {
			r.errs.add(name, "%q is not a whole number", x)
			return 0
		}
	default:
		r.errs.add(name, "expected a whole number, got %T %v", x, x)
		return 0
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		r.errs.add(name, "%d is out of range", n)
		return 0
	}
	return int(n)
}

// duration reads a choria duration, as the anchor does: Go's units plus d, w, M, y.
func (r *reader) duration(name string) time.Duration {
	switch x := r.get(name).(type) {
	case nil:
		return 0
	case string:
		d, err := choria.ParseDuration(x)
		if err != nil {
			r.errs.add(name, "%q is not a duration (%v; valid examples: 10s, 5m, 1h, 1d, 1y)", x, err)
			return d
		}
		if choriaUnitOverflows(x) {
			r.errs.add(name, "%q is beyond the range of a duration (at most 292 years)", x)
			return 0
		}
		return d
	default:
		r.errs.add(name, "expected a duration such as 5m or 1h, got %T %v", x, x)
		return 0
	}
}

// choriaUnitOverflows is true when s counts weeks, days, months or years beyond what a
// time.Duration holds, or is not a number: choria.ParseDuration multiplies such a count without
// a check, so a large one wraps around into another duration, positive or negative.
func choriaUnitOverflows(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	var hours float64
	switch s[len(s)-1] {
	case 'w', 'W':
		hours = 7 * 24
	case 'd', 'D':
		hours = 24
	case 'M':
		hours = 30 * 24
	case 'y', 'Y':
		hours = 365 * 24
	default:
		return false // Go's own units, whose range time.ParseDuration checks
	}
	v, err := strconv.ParseFloat(s[:len(s)-1], 32)
	if err != nil {
		return false // choria.ParseDuration refuses it
	}
	h := math.Trunc(v * hours)
	return math.IsNaN(h) || math.Abs(h) > float64(math.MaxInt64/int64(time.Hour))
}

// list reads a YAML sequence, a flag's values, or from the environment a JSON array or a
// comma-separated list.
func (r *reader) list(name string) []string {
	switch x := r.get(name).(type) {
	case nil:
		return nil
	case []string:
		return trimAll(x)
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				r.errs.add(name, "item %d: expected a string, got %T %v", i, e, e)
				return nil
			}
			out = append(out, s)
		}
		return trimAll(out)
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "[") {
			var out []string
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				r.errs.add(name, "%q is not a JSON array of strings: %v", x, err)
				return nil
			}
			return trimAll(out)
		}
		return trimAll(strings.Split(s, ","))
	default:
		r.errs.add(name, "expected a list, got %T %v", x, x)
		return nil
	}
}

// section refuses a scalar where the file must hold a map of keys, such as `features: true`,
// which viper would otherwise read as all of features.* unset.
func (r *reader) section(name string) {
	switch x := r.v.Get(name).(type) {
	case nil, map[string]any:
	default:
		var sub []string
		for _, k := range allKeys() {
			if strings.HasPrefix(k.name, name+".") {
				sub = append(sub, strings.TrimPrefix(k.name, name+"."))
			}
		}
		r.errs.add(name, "expected a map of %s, got %T %v", strings.Join(sub, ", "), x, x)
	}
}

func trimAll(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func describeMap(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) > 3 {
		ks = ks[:3]
	}
	return fmt.Sprintf("keys %s", strings.Join(ks, ", "))
}
