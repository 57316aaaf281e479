// SPDX-License-Identifier: Apache-2.0

package api

import (
	"fmt"
	"slices"
)

// Role is what an admin credential may do (auth.admins); each role includes those below it.
type Role string

// Admin roles, lowest first.
const (
	// RoleRead opens the admin reads: status, nodes, node, failures, events.
	RoleRead Role = "read"
	// RoleOperate adds the operator's writes on nodes and the pause flag.
	RoleOperate Role = "operate"
	// RoleAdmin adds the cluster's own writes (join, remove, snapshot) and profiles: everything.
	RoleAdmin Role = "admin"
)

// Roles lists the admin roles, lowest first.
func Roles() []Role { return []Role{RoleRead, RoleOperate, RoleAdmin} }

// ParseRole reads a role's name; anything else is an error naming the roles there are.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !slices.Contains(Roles(), r) {
		return "", fmt.Errorf("role %q is not one of %v", s, Roles())
	}
	return r, nil
}

// Includes reports whether r may do what need allows: r is need or above it.
func (r Role) Includes(need Role) bool {
	have, want := slices.Index(Roles(), r), slices.Index(Roles(), need)
	return have >= 0 && want >= 0 && have >= want
}

// Caller is an authenticated admin: the name its writes are recorded under, and its role.
type Caller struct {
	Name string `json:"name"`
	Role Role   `json:"role"`
}
