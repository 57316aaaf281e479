// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"crypto/subtle"
	"fmt"
	"net/http"

	"github.com/seed96588659/muster/pkg/api"
)

// AdminCredential is one named admin (auth.admins): with a Token it is a bearer token, without
// one the client certificate whose common name is Name. Name is what the audit, each node's
// history and the event stream record of its writes.
type AdminCredential struct {
	Name  string
	Role  api.Role
	Token string
}

// legacyAdmin is the name every AdminTokens entry acts under, with role admin.
const legacyAdmin = "admin"

// caller is an authenticated admin: its name and role, and whether its client certificate
// authenticated it (a forward cannot carry that certificate: the leader would see the member's).
type caller struct {
	name   string
	role   api.Role
	byCert bool
}

// namedSecret is an admin token kept as its digest, with whom it names.
type namedSecret struct {
	secret secret
	name   string
	role   api.Role
}

// routeRole is the role an admin route needs. A route not listed needs admin, so a new endpoint
// is closed to the lower roles until it is placed here.
func routeRole(route string) api.Role {
	switch route {
	case api.PathStatus, api.PathNodes, api.PathNode + "{identity}", api.PathFailures, api.PathEvents:
		return api.RoleRead
	case api.PathPause, api.PathResume, api.PathRetry, api.PathOperator:
		// The operator's writes on nodes (every verb of api.Verbs) and the pause flag; the held
		// queue's approve is one of them, here or as a verb of PathOperator.
		return api.RoleOperate
	}
	// join, remove, snapshot, the profiles: the cluster itself.
	return api.RoleAdmin
}

// bindAdmins keeps the legacy admin tokens (each the admin named admin), the named admins and
// the readers' certificates (role read); it refuses an entry without a name or role, a name or
// token given twice, and a certificate named as both a reader and an admin.
func (s *Server) bindAdmins(legacy []string, named []AdminCredential, readers []string) error {
	s.certAdmins = map[string]api.Role{}
	names := map[string]bool{}
	tokens := map[secret]string{}
	add := func(where string, c AdminCredential) error {
		if err := api.ValidateName(where+".name", c.Name); err != nil {
			return fmt.Errorf("httpapi: %w", err)
		}
		if _, err := api.ParseRole(string(c.Role)); err != nil {
			return fmt.Errorf("httpapi: %s (%s): %w", where, c.Name, err)
		}
		if c.Token == "" {
			if _, dup := s.certAdmins[c.Name]; dup {
				return fmt.Errorf("httpapi: %s: the certificate of %s is bound twice", where, c.Name)
			}
			s.certAdmins[c.Name] = c.Role
			return nil
		}
		sec := newSecret(c.Token)
		if other, dup := tokens[sec]; dup {
			return fmt.Errorf("httpapi: %s (%s): the token is %s's too", where, c.Name, other)
		}
		tokens[sec] = c.Name
		s.admins = append(s.admins, namedSecret{secret: sec, name: c.Name, role: c.Role})
		return nil
	}
	for i, t := range legacy {
		if t == "" {
			return fmt.Errorf("httpapi: an admin token is empty")
		}
		if err := add(fmt.Sprintf("admin_tokens[%d]", i), AdminCredential{Name: legacyAdmin, Role: api.RoleAdmin, Token: t}); err != nil {
			return err
		}
	}
	for i, c := range named {
		if names[c.Name] || (c.Name == legacyAdmin && len(legacy) > 0) {
			return fmt.Errorf("httpapi: admins[%d]: the name %s is given twice", i, c.Name)
		}
		names[c.Name] = true
		if err := add(fmt.Sprintf("admins[%d]", i), c); err != nil {
			return err
		}
	}
	for i, cn := range readers {
		if err := add(fmt.Sprintf("readers[%d]", i), AdminCredential{Name: cn, Role: api.RoleRead}); err != nil {
			return err
		}
	}
	return nil
}

// adminByToken is the admin a presented token names, comparing with every admin token without
// stopping early.
func (s *Server) adminByToken(tok string) (caller, bool) {
	p := newSecret(tok)
	var found caller
	ok := false
	for _, a := range s.admins {
		if subtle.ConstantTimeCompare(p[:], a.secret[:]) == 1 && !ok {
			found, ok = caller{name: a.name, role: a.role}, true
		}
	}
	return found, ok
}

// certAdmin is the admin (or reader) a verified client certificate is, by its common name; a
// certificate bound to an edge is never one, whatever it is named.
func (s *Server) certAdmin(cn string) (caller, bool) {
	if _, edge := s.certEdges[cn]; edge {
		return caller{}, false
	}
	role, ok := s.certAdmins[cn]
	return caller{name: cn, role: role, byCert: true}, ok
}

// adminByCert is true when r's admin is its client certificate: it carries no bearer token, and
// its verified certificate names an admin or a reader.
func (s *Server) adminByCert(r *http.Request) bool {
	if bearer(r) != "" || !hasVerifiedClientCert(r) {
		return false
	}
	_, ok := s.certAdmin(r.TLS.VerifiedChains[0][0].Subject.CommonName)
	return ok
}

// hasAdmins is false when no credential opens the admin API at all.
func (s *Server) hasAdmins() bool { return len(s.admins) > 0 || len(s.certAdmins) > 0 }

// stamp writes the authenticated admin's name into a write that records who asked; what the
// client sent there is replaced, so a caller can record no name but its own.
func stamp(req any, c caller) {
	switch r := req.(type) {
	case *api.OperatorRequest:
		r.By = c.name
	case *api.RetryRequest:
		r.By = c.name
	}
}
