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
// client certificates with no bindings configured, insecure mode, a member's forward); unbound
// names a certificate bound to no edge while others are, which may act as none.
type binding struct {
	any     bool
	edge    string
	regions []string
	unbound string
	// notMember is the member name an unbound certificate carrying a forward proof lacked.
	notMember string
}

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

// certBinding is the binding of a verified client certificate. With no certificate bound, every
// one of the cluster's CA may act as any edge. Otherwise a certificate bound to no edge may act
// as none, unless it carries a member's forward proof (member.go): the forwarding member checked
// the edge's own binding.
func (s *Server) certBinding(r *http.Request) binding {
	cn := r.TLS.VerifiedChains[0][0].Subject.CommonName
	if b, ok := s.certEdges[cn]; ok {
		return b
	}
	if len(s.certEdges) == 0 {
		return binding{any: true}
	}
	if !s.fromMember(r) {
		return binding{unbound: cn}
	}
	if leaf := r.TLS.VerifiedChains[0][0]; s.memberName != "" && !slices.Contains(leaf.DNSNames, s.memberName) {
		s.log.Warn("a forward refused: its certificate is not a member's", "certificate", cn, "dns_names", leaf.DNSNames, "member_name", s.memberName)
		return binding{unbound: cn, notMember: s.memberName}
	}
	return binding{any: true}
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
