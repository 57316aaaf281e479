// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"net"
	"sort"

	"github.com/seed96588659/muster/pkg/settings"
)

// warnings collects one line per key that is accepted but ignored, not known at all, or set in a
// way that exposes a secret.
type warnings struct {
	s      *settings.Schema
	list   []string
	warned map[string]bool
}

func (w *warnings) add(name, format string, args ...any) {
	if w.warned == nil {
		w.warned = map[string]bool{}
	}
	if w.warned[name] {
		return
	}
	w.warned[name] = true
	w.list = append(w.list, name+": "+fmt.Sprintf(format, args...))
}

// fileKeys warns about the file's ignored and unknown keys. A scalar where a section belongs
// (`features: true`) is left to parse, which refuses it.
func (w *warnings) fileKeys(fileKeys []string) {
	sort.Strings(fileKeys)
	for _, name := range fileKeys {
		if k, ok := w.s.Lookup(name); ok {
			if k.Ignored != "" {
				w.add(name, "ignored: %s", k.Ignored)
			}
			continue
		}
		if w.s.IsSection(name) {
			continue
		}
		w.add(name, "unknown key, ignored%s", w.s.SuggestKey(name))
	}
}

// environment warns about MUSTER_EDGE_ variables that name no key, and about ignored keys set there.
func (w *warnings) environment(environ []string) {
	for _, name := range w.s.Variables(environ) {
		if name == EnvName(FlagConfig) {
			continue
		}
		k, ok := w.s.KeyOfVariable(name)
		switch {
		case !ok:
			w.add(name, "unknown environment variable, ignored%s", w.s.SuggestVariable(name))
		case k.Ignored != "":
			w.add(k.Name, "ignored: %s", k.Ignored)
		}
	}
}

// monitor warns of a pause token on a monitor that other machines reach: the monitor serves plain
// HTTP, so a pause or resume sent to it from elsewhere carries the token readable on the network.
func (w *warnings) monitor(c *Config) {
	if c.PauseToken == "" || c.MonitorPort == 0 || loopback(c.MonitorBind) {
		return
	}
	bind := c.MonitorBind
	if bind == "" {
		bind = "every interface"
	}
	w.add("pause_token", "set while the monitor (monitor_port %d) listens on %s without TLS: the token crosses the network in plain text; set monitor_bind to 127.0.0.1 and pause from this machine, or leave pause_token unset", c.MonitorPort, bind)
}

// loopback reports whether host (an IP address or name, not empty) reaches this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
