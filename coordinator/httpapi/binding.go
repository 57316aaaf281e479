// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/seed96588659/muster/pkg/api"
)

// EdgeCredential binds a credential to the one edge name and the regions it may act for. With a
// Token it is a bearer token; without one it binds the client certificate whose common name is Edge.
type EdgeCredential struct {
	Token   string
	Edge    string
	Regions []string
}

// binding is what a credential may act as; any is an unbound credential (legacy edge tokens,
// client certificates while no edge is bound at all, insecure mode, a member's forward); unbound
// names a certificate that may act as no edge: bound to none while some edge is bound, or a
// reader's.
type binding struct {
	any     bool
	edge    string
	regions []string
	unbound string
	// reader marks an unbound certificate of an admin (Admins without a token, or Readers).
	reader bool
	// notMember is the member name an unbound certificate carrying a forward proof lacked.
	notMember string
}

// grants is false for a credential that may act as no edge.
func (b binding) grants() bool { return b.unbound == "" }

type boundSecret struct {
	secret secret
	binding
}

func (s *Server) bindEdges(creds []EdgeCredential) error {
	s.certEdges = map[string]binding{}
	for i, c := range creds {
		if err := api.ValidateName(fmt.Sprintf("edges[%d].edge", i), c.Edge); err != nil {
			return fmt.Errorf("httpapi: %w", err)
		}
		if len(c.Regions) == 0 {
			return fmt.Errorf("httpapi: edges[%d] (%s): lists no region", i, c.Edge)
		}
		b := binding{edge: c.Edge, regions: slices.Clone(c.Regions)}
		if c.Token == "" {
			if _, dup := s.certEdges[c.Edge]; dup {
				return fmt.Errorf("httpapi: edges[%d]: certificate of %s bound twice", i, c.Edge)
			}
			s.certEdges[c.Edge] = b
			continue
		}
		s.edges = append(s.edges, boundSecret{secret: newSecret(c.Token), binding: b})
	}
	return nil
}

// boundToken returns the binding of a presented token, comparing with every bound token
// without stopping early.
func (s *Server) boundToken(tok string) (binding, bool) {
	p := newSecret(tok)
	var found binding
	ok := false
	for _, b := range s.edges {
		if subtle.ConstantTimeCompare(p[:], b.secret[:]) == 1 && !ok {
			found, ok = b.binding, true
		}
	}
	return found, ok
}

// tokenBinding is the binding of a presented edge token: its auth.edges entry, or any edge for
// a legacy unbound token; ok is false when it is neither.
func (s *Server) tokenBinding(tok string) (binding, bool) {
	if b, ok := s.boundToken(tok); ok {
		return b, true
	}
	if matchAny(tok, s.edgeTokens) {
		return binding{any: true}, true
	}
	return binding{}, false
}

// bindsEdges is true once any edge is bound, by token or by certificate: from then on a
// certificate is an edge only by its own binding.
func (s *Server) bindsEdges() bool { return len(s.edges) > 0 || len(s.certEdges) > 0 }

// certBinding is the binding of a verified client certificate: its own binding; with no edge
// bound at all (the legacy client_certs setup), any edge, except for an admin's or a reader's
// certificate.
// Otherwise a certificate bound to no edge may act as none, unless it carries a member's forward
// proof (member.go): the forwarding member checked the edge's own credential.
func (s *Server) certBinding(r *http.Request) binding {
	leaf := r.TLS.VerifiedChains[0][0]
	cn := leaf.Subject.CommonName
	if b, ok := s.certEdges[cn]; ok {
		return b
	}
	_, admin := s.certAdmins[cn]
	if !s.bindsEdges() {
		if admin {
			return binding{unbound: cn, reader: true}
		}
		return binding{any: true}
	}
	if !s.fromMember(r) {
		return binding{unbound: cn, reader: admin}
	}
	if s.memberName != "" && !slices.Contains(leaf.DNSNames, s.memberName) {
		s.log.Warn("a forward refused: its certificate is not a member's", "certificate", cn, "dns_names", leaf.DNSNames, "member_name", s.memberName)
		return binding{unbound: cn, notMember: s.memberName}
	}
	return binding{any: true}
}

// agree is what a request carrying both a valid token and a verified certificate may act as:
// what both allow. A certificate that may act as no edge adds nothing and takes nothing away (an
// edge's client that presents some certificate of the CA); two bindings must name the same edge
// and share a region.
func agree(byToken, byCert binding) (binding, error) {
	switch {
	case !byCert.grants() || byCert.any:
		return byToken, nil
	case byToken.any:
		return byCert, nil
	case byToken.edge != byCert.edge:
		return binding{}, fmt.Errorf("%w: the bearer token is bound to edge %s, the client certificate to edge %s; a request's credentials must agree", errWrongEdge, byToken.edge, byCert.edge)
	}
	var regions []string
	for _, r := range byToken.regions {
		if slices.Contains(byCert.regions, r) {
			regions = append(regions, r)
		}
	}
	if len(regions) == 0 {
		return binding{}, fmt.Errorf("%w: edge %s's bearer token is bound to %v, its client certificate to %v; a request's credentials must agree", errWrongEdge, byToken.edge, byToken.regions, byCert.regions)
	}
	return binding{edge: byToken.edge, regions: regions}, nil
}

// errWrongEdge refuses a request its credential is not bound to.
var errWrongEdge = errors.New("credential not bound to this edge or region")

// permits checks that b may send req: its edge name and region are the credential's.
func (b binding) permits(req any) error {
	if b.any {
		return nil
	}
	edge, region, ok := scope(req)
	if !ok {
		return nil
	}
	if b.notMember != "" {
		return fmt.Errorf("%w: certificate %s forwards as a member but does not carry the member name %s", errWrongEdge, b.unbound, b.notMember)
	}
	if b.reader {
		return fmt.Errorf("%w: certificate %s is bound to no edge: it is an admin's (auth.admins or auth.readers), which opens the admin API, never the edge API", errWrongEdge, b.unbound)
	}
	if b.unbound != "" {
		return fmt.Errorf("%w: certificate %s is bound to no edge (auth.edges binds each edge's certificate by its common name)", errWrongEdge, b.unbound)
	}
	if edge != b.edge {
		return fmt.Errorf("%w: the credential is bound to edge %s, the request names edge %q", errWrongEdge, b.edge, edge)
	}
	if !slices.Contains(b.regions, region) {
		return fmt.Errorf("%w: edge %s may act in %v, the request names region %q", errWrongEdge, b.edge, b.regions, region)
	}
	return nil
}

// scope is the edge and region an edge request names.
func scope(req any) (edge, region string, ok bool) {
	switch r := req.(type) {
	case *api.RegisterRequest:
		return r.Edge, r.Region, true
	case *api.AcquireRequest:
		return r.Edge, r.Region, true
	case *api.RenewRequest:
		return r.Edge, r.Region, true
	case *api.ReportRequest:
		return r.Edge, r.Region, true
	case *api.HeartbeatRequest:
		return r.Edge, r.Region, true
	}
	return "", "", false
}
