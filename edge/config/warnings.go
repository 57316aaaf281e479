// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"sort"

	"github.com/seed96588659/muster/pkg/settings"
)

// warnings collects one line per key that is accepted but ignored, or not known at all.
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
