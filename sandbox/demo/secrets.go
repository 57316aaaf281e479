// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// secrets are the run's bearer tokens, fresh every run: the admin token and one token per edge,
// bound by the coordinators to that edge's name and region.
type secrets struct {
	admin string
	edges map[string]edgeCredential // by region
}

// edgeCredential is one edge's name and token.
type edgeCredential struct {
	name  string
	token string
}

// newSecrets draws the tokens for the edges named by region.
func newSecrets(edgeNames map[string]string) (secrets, error) {
	s := secrets{edges: map[string]edgeCredential{}}
	var err error
	if s.admin, err = token(); err != nil {
		return s, err
	}
	for region, name := range edgeNames {
		t, err := token()
		if err != nil {
			return s, err
		}
		s.edges[region] = edgeCredential{name: name, token: t}
	}
	return s, nil
}

func token() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("draw a token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// authEdges are the coordinators' auth.edges items: EDGE@REGION=TOKEN.
func (s secrets) authEdges() []string {
	var items []string
	for _, r := range slices.Sorted(maps.Keys(s.edges)) {
		e := s.edges[r]
		items = append(items, fmt.Sprintf("%s@%s=%s", e.name, r, e.token))
	}
	return items
}

// write saves the tokens as a shell file only the user can read: sourcing it sets the admin
// token for muster-coordinator's admin commands, so they need not show it.
func (s secrets) write(path string, addrs []string) error {
	var b strings.Builder
	fmt.Fprintln(&b, "# This run's throwaway credentials (make run). Source it: . "+path)
	fmt.Fprintf(&b, "export MUSTER_ADDR=%s\n", strings.Join(addrs, ","))
	fmt.Fprintf(&b, "export MUSTER_AUTH_ADMIN_TOKEN=%s\n", s.admin)
	fmt.Fprintln(&b, "# The edges' tokens (MUSTER_EDGE_COORDINATOR_TOKEN), bound to their name and region by the")
	fmt.Fprintln(&b, "# coordinators' auth.edges:")
	for _, r := range slices.Sorted(maps.Keys(s.edges)) {
		e := s.edges[r]
		fmt.Fprintf(&b, "# %s@%s=%s\n", e.name, r, e.token)
	}
	// Created 0600 from the start, so the file is never readable by others, even briefly.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write credentials: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("write credentials %s: %w", path, err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("credentials %s: %w", path, err)
	}
	return f.Close()
}
