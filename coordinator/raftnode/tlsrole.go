// SPDX-License-Identifier: Apache-2.0

package raftnode

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"slices"
)

// DefaultMemberName is the DNS name (subject alternative name) a member's certificate carries
// unless tls.member_name says otherwise.
const DefaultMemberName = "member.muster"

// Why a role name: one CA signs the members', the edges' and the status page's certificates, so a
// certificate that verifies says nothing about its holder's role. Raft trusts every peer with the
// whole log (a peer posing as a leader at a higher term is obeyed), so the transport requires the
// member name on both ends, as Consul and Nomad do with verify_server_hostname.

// memberTLS is conf requiring that the peer's certificate carry name, on the listener (the
// client's certificate) and on the dialer (the server's); a refusal is logged with the
// certificate's names, since the peer only sees a failed handshake.
func memberTLS(conf *tls.Config, name string, log *slog.Logger) *tls.Config {
	c := conf.Clone()
	verify := c.VerifyConnection
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("raft tls: the peer presented no certificate")
		}
		leaf := cs.PeerCertificates[0]
		if !slices.Contains(leaf.DNSNames, name) {
			log.Warn("raft connection refused: the peer's certificate is not a member's",
				"certificate", leaf.Subject.CommonName, "dns_names", leaf.DNSNames, "member_name", name)
			return fmt.Errorf("raft tls: certificate %q is not a member's: it does not carry the member name %s", leaf.Subject.CommonName, name)
		}
		if verify != nil {
			return verify(cs)
		}
		return nil
	}
	return c
}
