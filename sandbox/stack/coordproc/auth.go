// SPDX-License-Identifier: Apache-2.0

package coordproc

import "strings"

// Auth is the credentials every member serves with. They reach the members through the
// environment, never the command line, which ps shows to every user.
type Auth struct {
	// AdminToken is auth.admin_token; the cluster's own status reads use it, so it is required.
	AdminToken string
	// EdgeTokens is auth.edge_tokens: tokens that open the edge API for any edge name.
	EdgeTokens []string
	// Edges is auth.edges: EDGE@REGION=TOKEN items binding a token to an edge and its region.
	Edges []string
	// Admins is auth.admins: NAME:ROLE=TOKEN items naming an admin and its role.
	Admins []string
}

// env is the members' environment for a; the coordinator reads a list as comma separated.
func (a Auth) env() []string {
	out := []string{"MUSTER_AUTH_ADMIN_TOKEN=" + a.AdminToken}
	if len(a.EdgeTokens) > 0 {
		out = append(out, "MUSTER_AUTH_EDGE_TOKENS="+strings.Join(a.EdgeTokens, ","))
	}
	if len(a.Edges) > 0 {
		out = append(out, "MUSTER_AUTH_EDGES="+strings.Join(a.Edges, ","))
	}
	if len(a.Admins) > 0 {
		out = append(out, "MUSTER_AUTH_ADMINS="+strings.Join(a.Admins, ","))
	}
	return out
}
