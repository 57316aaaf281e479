// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/choria-io/go-choria/protocol"
)

// matcher evaluates a request filter against many nodes, with go-choria's server semantics
// (every filter kind present must match; identities OR'ed, "/re/" is a regular expression),
// doing once per request what does not depend on the node.
type matcher struct {
	f        *protocol.Filter
	log      filterLog
	empty    bool
	ids      map[string]bool
	idRes    []*regexp.Regexp
	hasIDs   bool
	agentsOK bool
	hasAgent bool
	hasClass bool
	hasFacts bool
	hasComp  bool
}

func newMatcher(f *protocol.Filter, log *slog.Logger) *matcher {
	m := &matcher{f: f, log: filterLog{log}, empty: f.Empty()}
	if m.empty {
		return m
	}
	if ids := f.IdentityFilters(); len(ids) > 0 {
		m.hasIDs = true
		m.ids = map[string]bool{}
		for _, id := range ids {
			if len(id) > 1 && strings.HasPrefix(id, "/") && strings.HasSuffix(id, "/") {
				if re, err := regexp.Compile(id[1 : len(id)-1]); err == nil {
					m.idRes = append(m.idRes, re)
				}
			}
			m.ids[id] = true
		}
	}
	if len(f.AgentFilters()) > 0 {
		m.hasAgent = true
		m.agentsOK = f.MatchAgents(knownAgents)
	}
	m.hasClass = len(f.ClassFilters()) > 0
	m.hasFacts = len(f.FactFilters()) > 0
	m.hasComp = len(f.CompoundFilters()) > 0
	return m
}

// matches reports whether a node with this identity and facts should process the request.
func (m *matcher) matches(identity string, facts json.RawMessage) bool {
	if m.empty {
		return true
	}
	if m.hasIDs && !m.matchIdentity(identity) {
		return false
	}
	if m.hasAgent && !m.agentsOK {
		return false
	}
	if m.hasClass && !m.f.MatchClasses(nil, m.log) {
		return false
	}
	if m.hasFacts && !m.f.MatchFacts(facts, m.log) {
		return false
	}
	if m.hasComp && !m.f.MatchCompound(facts, []string{}, knownAgents, nil, m.log) {
		return false
	}
	return true
}

func (m *matcher) matchIdentity(identity string) bool {
	if m.ids[identity] {
		return true
	}
	for _, re := range m.idRes {
		if re.MatchString(identity) {
			return true
		}
	}
	return false
}

// filterLog adapts slog to the logger go-choria's filter functions want.
type filterLog struct{ l *slog.Logger }

func (f filterLog) Warnf(format string, args ...any)  { f.l.Warn(fmt.Sprintf(format, args...)) }
func (f filterLog) Debugf(format string, args ...any) {}
func (f filterLog) Errorf(format string, args ...any) { f.l.Error(fmt.Sprintf(format, args...)) }
