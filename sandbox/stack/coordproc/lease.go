// SPDX-License-Identifier: Apache-2.0

package coordproc

import (
	"strconv"
	"time"
)

// Lease is the members' lease.* settings; a zero field keeps the coordinator's default.
type Lease struct {
	TTL              time.Duration // --lease-ttl
	Grace            time.Duration // --lease-grace
	MaxClockDrift    time.Duration // --lease-max-clock-drift
	MaxWait          time.Duration // --lease-max-wait
	ReprovisionAfter time.Duration // --lease-reprovision-after
	RetryBackoff     time.Duration // --lease-retry-backoff
	RetryBackoffMax  time.Duration // --lease-retry-backoff-max
	MaxAttempts      int           // --lease-max-attempts
}

// flags are the serve flags that set l's non-zero fields.
func (l Lease) flags() []string {
	var out []string
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{
		{"--lease-ttl", l.TTL},
		{"--lease-grace", l.Grace},
		{"--lease-max-clock-drift", l.MaxClockDrift},
		{"--lease-max-wait", l.MaxWait},
		{"--lease-reprovision-after", l.ReprovisionAfter},
		{"--lease-retry-backoff", l.RetryBackoff},
		{"--lease-retry-backoff-max", l.RetryBackoffMax},
	} {
		if d.v != 0 {
			out = append(out, d.flag, d.v.String())
		}
	}
	if l.MaxAttempts != 0 {
		out = append(out, "--lease-max-attempts", strconv.Itoa(l.MaxAttempts))
	}
	return out
}
