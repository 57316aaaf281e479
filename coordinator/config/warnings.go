// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"

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
	if fs != nil {
		if f := fs.Lookup(settings.FlagName(KeyAdminToken)); f != nil && f.Changed {
			out = append(out, fmt.Sprintf("--%s: the admin token given as a flag shows in ps; use %s or the configuration file", f.Name, EnvName(KeyAdminToken)))
		}
	}
	return append(out, unknownVariables(environ)...)
}

// unknownVariables warns of each MUSTER_* variable that names no setting (a typo leaves the
// default in force without a word otherwise); the edge's MUSTER_EDGE_* ones are left to it.
func unknownVariables(environ []string) []string {
	s := schema()
	var out []string
	for _, name := range s.Variables(environ, edgeEnvPrefix) {
		if _, ok := s.KeyOfVariable(name); !ok && name != EnvName(FlagConfig) {
			out = append(out, fmt.Sprintf("%s: not a setting, ignored", name))
		}
	}
	return out
}
