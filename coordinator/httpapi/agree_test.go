// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"errors"
	"slices"
	"testing"
)

// TestAgree_ARequestGetsWhatBothCredentialsAllow: a token and a certificate bound to one edge
// keep the regions both list; bound to different edges or to regions that do not overlap they
// are refused; a certificate acting as no edge, or as any (a member's forward), leaves the token's
// binding as it is.
func TestAgree_ARequestGetsWhatBothCredentialsAllow(t *testing.T) {
	eu := binding{edge: "e1", regions: []string{"eu", "us"}}
	for _, c := range []struct {
		name    string
		tok     binding
		cert    binding
		edge    string
		regions []string
		refused bool
	}{
		{"same edge, overlapping regions", eu, binding{edge: "e1", regions: []string{"us", "ap"}}, "e1", []string{"us"}, false},
		{"same edge, no common region", eu, binding{edge: "e1", regions: []string{"ap"}}, "", nil, true},
		{"another edge", eu, binding{edge: "e2", regions: []string{"eu"}}, "", nil, true},
		{"certificate bound to no edge", eu, binding{unbound: "alice"}, "e1", []string{"eu", "us"}, false},
		{"reader's certificate", eu, binding{unbound: "alice", reader: true}, "e1", []string{"eu", "us"}, false},
		{"member's forward", eu, binding{any: true}, "e1", []string{"eu", "us"}, false},
		{"unbound token, bound certificate", binding{any: true}, binding{edge: "e2", regions: []string{"ap"}}, "e2", []string{"ap"}, false},
	} {
		got, err := agree(c.tok, c.cert)
		switch {
		case c.refused && !errors.Is(err, errWrongEdge):
			t.Errorf("%s: %+v %v, want %v", c.name, got, err, errWrongEdge)
		case !c.refused && (err != nil || got.any || got.edge != c.edge || !slices.Equal(got.regions, c.regions)):
			t.Errorf("%s: %+v %v, want edge %s in %v", c.name, got, err, c.edge, c.regions)
		}
	}
}
