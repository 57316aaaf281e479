// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/kballard/go-shellquote"
	"github.com/seed96588659/muster/pkg/metrics"
)

const (
	// DefaultTimeout is choria-provisioner's fixed helper timeout.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxOutput bounds one answer; real answers (a config, a certificate, policies) are a few KiB.
	DefaultMaxOutput = 1 << 20
)

// Options configure a Runner.
type Options struct {
	// Command is the helper setting: a command line split like a shell's, quotes honoured.
	Command string
	// Timeout bounds one request; DefaultTimeout when zero.
	Timeout time.Duration
	// MaxOutput bounds one answer in bytes; DefaultMaxOutput when zero.
	MaxOutput int
	// Site labels HelperTime.
	Site string
	// Metrics receives HelperTime; nil records nothing.
	Metrics *metrics.Registry
	// Logger receives the helper's stderr at warn; nil discards it.
	Logger *slog.Logger
	// Secrets are values redacted from the helper's stderr and error lines wherever they
	// appear, whatever their length: the edge's tokens, passwords and keys.
	Secrets []string
	// Environment names further variables of the edge's environment the helper gets, besides
	// PATH, HOME, LANG, LC_*, TZ and TMPDIR.
	Environment []string
}

// command is a validated Options with the command line split.
type command struct {
	Options
	argv []string
	// name is argv[0]: errors and logs name the helper by it alone, since arguments may hold secrets.
	name string
	// env is the helper's whole environment, taken from the edge's at construction.
	env     []string
	secrets *secretValues
}

func newCommand(o Options) (*command, error) {
	argv, err := shellquote.Split(o.Command)
	if err != nil {
		// the command line itself may hold secrets, so only the parser's reason is given
		return nil, fmt.Errorf("parse helper command: %w", err)
	}
	if len(argv) == 0 {
		return nil, errors.New("parse helper command: empty")
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("helper %s: negative timeout %s", argv[0], o.Timeout)
	}
	if o.MaxOutput < 0 {
		return nil, fmt.Errorf("helper %s: negative output limit %d", argv[0], o.MaxOutput)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	for _, name := range o.Environment {
		if strings.HasPrefix(name, reservedPrefix) {
			return nil, fmt.Errorf("helper %s: environment: %s is the edge's own variable and never passed to a helper", argv[0], name)
		}
	}
	return &command{Options: o, argv: argv, name: argv[0], env: environment(os.Environ(), o.Environment), secrets: newSecretValues(o.Secrets)}, nil
}

// redact hides the configured secrets, then whatever looks like a key, certificate or token;
// cut says text was cut from longer output, so a secret may be cut too.
func (c *command) redact(text string, cut bool) string {
	return redact(c.secrets.hide(text, cut))
}

// observe records one run's duration, as choria-provisioner's runHelper does for every run.
func (c *command) observe(start time.Time) {
	if c.Metrics != nil {
		c.Metrics.HelperTime.WithLabelValues(c.Site).Observe(time.Since(start).Seconds())
	}
}
