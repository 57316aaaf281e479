// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/pkg/settings"
)

// edgeEnvPrefix is the edge's namespace: an edge on the same host sets its variables there.
const edgeEnvPrefix = EnvPrefix + "_EDGE_"

// warnings lists, one line each naming the key, what c allows but exposes the cluster, and what
// is set but ignored: MUSTER_* variables in environ that name no setting, and an admin token
// given as a flag, which any user of the machine reads in ps.
func (c *Config) warnings(environ []string, fs *pflag.FlagSet) []string {
	var out []string
	if c.Auth.Insecure {
		out = append(out, fmt.Sprintf("%s: the edge API takes requests without any credential from any caller on this host, as any edge", KeyInsecure))
	}
	if !c.Raft.TLS && !loopback(c.Raft.Bind) {
		out = append(out, fmt.Sprintf("%s: off while %s %s is not a loopback address: whoever reaches it can join the replication stream and rewrite the ledger", KeyRaftTLS, KeyRaftBind, c.Raft.Bind))
	}
	if !c.TLS.Enabled() && !loopback(c.HTTP.Bind) {
		out = append(out, fmt.Sprintf("%s: not set while %s %s is not a loopback address: tokens cross the network in plain text", KeyTLSCert, KeyHTTPBind, c.HTTP.Bind))
	}
	out = append(out, c.Auth.clientCertWarnings()...)
	if fs != nil {
		if f := fs.Lookup(settings.FlagName(KeyAdminToken)); f != nil && f.Changed {
			out = append(out, fmt.Sprintf("--%s: the admin token given as a flag shows in ps; use %s or the configuration file", f.Name, EnvName(KeyAdminToken)))
		}
		if f := fs.Lookup(settings.FlagName(KeyAdmins)); f != nil && f.Changed && slices.ContainsFunc(c.Auth.Admins, func(a Admin) bool { return a.Token != "" }) {
			out = append(out, fmt.Sprintf("--%s: the admins' tokens given as a flag show in ps; use %s or the configuration file", f.Name, EnvName(KeyAdmins)))
		}
	}
	return append(out, unknownVariables(environ)...)
}

// clientCertWarnings says what auth.client_certs lets a certificate act as when that is not an
// edge's own binding. Beside edges bound by token only it is a warning, not a refusal: such a
// member started before, and no certificate acts as an edge any more, so it ends up exposing nothing.
func (a Auth) clientCertWarnings() []string {
	if !a.ClientCerts {
		return nil
	}
	certBound := slices.ContainsFunc(a.Edges, func(e Edge) bool { return e.Token == "" })
	switch {
	case len(a.Edges) == 0:
		return []string{fmt.Sprintf("%s: no %s item binds an edge, so every certificate %s signed acts as any edge in any region (except those named in %s); bind each edge's certificate with EDGE@REGION", KeyClientCerts, KeyEdges, KeyTLSCA, KeyReaders)}
	case !certBound:
		return []string{fmt.Sprintf("%s: no %s item binds a certificate (EDGE@REGION without a token), so no client certificate acts as an edge: it opens nothing; a status page needs its certificate's name in %s, not this; bind the edges' certificates or turn it off", KeyClientCerts, KeyEdges, KeyReaders)}
	}
	return nil
}

// unknownVariables warns of each MUSTER_* variable that names no setting (a typo leaves the
// default in force without a word otherwise); the edge's MUSTER_EDGE_* ones are left to it.
func unknownVariables(environ []string) []string {
	s := schema()
	var out []string
	for _, name := range s.Variables(environ, edgeEnvPrefix) {
		if _, ok := s.KeyOfVariable(name); !ok && name != EnvName(FlagConfig) {
			out = append(out, fmt.Sprintf("%s: not a setting, ignored%s", name, s.SuggestVariable(name)))
		}
	}
	return out
}
