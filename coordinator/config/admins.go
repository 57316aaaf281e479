// SPDX-License-Identifier: Apache-2.0

package config

import (
	"fmt"
	"slices"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/settings"
)

// LegacyAdminName is the name auth.admin_token acts under: one admin with role admin.
const LegacyAdminName = "admin"

// validateAdmins checks auth.admins: each entry a valid name and role, names and tokens unique
// among all credentials, tokens long enough and not the shipped example, and a certificate
// entry verifiable (tls.ca) and bound to no edge; no name is a reader's too. Errors name the entry
// by index and name, never its token.
func (c *Config) validateAdmins() error {
	a := c.Auth
	edgeTokens := map[string]string{}
	for i, t := range a.EdgeTokens {
		edgeTokens[t] = fmt.Sprintf("%s[%d]", KeyEdgeTokens, i)
	}
	for i, e := range a.Edges {
		if e.Token != "" {
			edgeTokens[e.Token] = fmt.Sprintf("%s[%d]", KeyEdges, i)
		}
	}
	names, tokens := map[string]int{}, map[string]int{}
	for i, ad := range a.Admins {
		key := fmt.Sprintf("%s[%d]", KeyAdmins, i)
		if err := api.ValidateName(key+" name", ad.Name); err != nil {
			return err
		}
		key = fmt.Sprintf("%s (%s)", key, ad.Name)
		if _, err := api.ParseRole(string(ad.Role)); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if j, dup := names[ad.Name]; dup {
			return fmt.Errorf("%s: the name repeats item %d; the audit must tell admins apart", key, j)
		}
		names[ad.Name] = i
		if ad.Name == LegacyAdminName && a.AdminToken != "" {
			return fmt.Errorf("%s: the name %s is %s's; name this admin otherwise", key, LegacyAdminName, KeyAdminToken)
		}
		if slices.Contains(a.Readers, ad.Name) {
			return fmt.Errorf("%s: %s is in %s too: one name is one admin (a reader is NAME:read here)", key, ad.Name, KeyReaders)
		}
		if ad.Token == "" {
			if err := c.certAdmin(key, ad.Name); err != nil {
				return err
			}
			continue
		}
		switch {
		case settings.Placeholder(ad.Token):
			return fmt.Errorf("%s: the token %s", key, settings.PlaceholderReason)
		case len(ad.Token) < minTokenLength:
			return fmt.Errorf("%s: token shorter than %d characters", key, minTokenLength)
		case ad.Token == a.AdminToken:
			return fmt.Errorf("%s: the token is %s; each admin needs a token of its own", key, KeyAdminToken)
		case edgeTokens[ad.Token] != "":
			return fmt.Errorf("%s: the token is an edge's (%s); an admin's token must open the admin API only", key, edgeTokens[ad.Token])
		}
		if j, dup := tokens[ad.Token]; dup {
			return fmt.Errorf("%s: the token repeats another admin's (item %d); each admin needs a token of its own", key, j)
		}
		tokens[ad.Token] = i
	}
	return nil
}

// certAdmin checks an admin bound to the client certificate of common name cn (key names it).
func (c *Config) certAdmin(key, cn string) error {
	a := c.Auth
	if c.TLS.CA == "" {
		return fmt.Errorf("%s: no token, and %s is not set to verify its client certificate", key, KeyTLSCA)
	}
	if slices.ContainsFunc(a.Edges, func(e Edge) bool { return e.Token == "" && e.Name == cn }) {
		return fmt.Errorf("%s: the certificate of %s is bound to an edge (%s); an edge's certificate does not open the admin API", key, cn, KeyEdges)
	}
	return nil
}
