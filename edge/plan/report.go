// SPDX-License-Identifier: Apache-2.0

package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Modes of a plan.
const (
	ModeStandalone = "standalone"
	ModeCluster    = "cluster"
)

// Report is one plan: every node discovered, in identity order, and the counts.
type Report struct {
	Site   string    `json:"site"`
	Region string    `json:"region"`
	Edge   string    `json:"edge"`
	Mode   string    `json:"mode"`
	At     time.Time `json:"at"`
	// HelperAsked is true when the helper was asked for every node that answered.
	HelperAsked bool `json:"helper_asked"`
	// Discovery notes a sweep that stopped early.
	Discovery string `json:"discovery,omitempty"`
	// Ledger is "read", or "not read: " and why; empty standalone.
	Ledger  string  `json:"ledger,omitempty"`
	Nodes   []Node  `json:"nodes"`
	Summary Summary `json:"summary"`
}

// Summary counts the nodes by action.
type Summary struct {
	Nodes     int `json:"nodes"`
	Provision int `json:"provision"`
	Upgrade   int `json:"upgrade"`
	Defer     int `json:"defer"`
	Shutdown  int `json:"shutdown"`
	Skip      int `json:"skip"`
	Fail      int `json:"fail"`
}

func summarize(nodes []Node) Summary {
	s := Summary{Nodes: len(nodes)}
	for _, n := range nodes {
		*s.count(n.Action)++
	}
	return s
}

// count is the counter of a; an unknown action counts as a failure.
func (s *Summary) count(a Action) *int {
	switch a {
	case Provision:
		return &s.Provision
	case Upgrade:
		return &s.Upgrade
	case Defer:
		return &s.Defer
	case Shutdown:
		return &s.Shutdown
	case Skip:
		return &s.Skip
	}
	return &s.Fail
}

// String lists every count in the order of Actions.
func (s Summary) String() string {
	parts := make([]string, 0, len(Actions()))
	for _, a := range Actions() {
		parts = append(parts, fmt.Sprintf("%d %s", *s.count(a), a))
	}
	return fmt.Sprintf("%d nodes: %s", s.Nodes, strings.Join(parts, ", "))
}

// Guarantee is the closing line of every plan.
const Guarantee = "nothing was sent to a node but discovery and rpcutil#inventory; no lease was taken, nothing configured, restarted or registered"

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// WriteText writes r for a terminal: a heading, one row per node (the helper's answer and the
// cluster's view beneath it), the summary and the guarantee.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "plan for site %s, region %s, edge %s (%s) at %s\n", r.Site, r.Region, r.Edge, r.Mode, r.At.Format(time.RFC3339))
	helperLine := "not asked (plan --helper asks it)"
	if r.HelperAsked {
		helperLine = "asked for every node that answered"
	}
	fmt.Fprintf(&b, "helper: %s\n", helperLine)
	if r.Ledger != "" {
		fmt.Fprintf(&b, "ledger: %s\n", r.Ledger)
	}
	if r.Discovery != "" {
		fmt.Fprintf(&b, "discovery: %s\n", r.Discovery)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tVERSION\tACTION\tWHY")
	for _, n := range r.Nodes {
		version := n.Version
		if version == "" {
			version = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Identity, version, n.Action, n.Reason)
		if n.Helper != nil {
			fmt.Fprintf(tw, "\t\t\thelper: %s\n", n.Helper.text())
		}
		if n.Cluster != nil {
			fmt.Fprintf(tw, "\t\t\tcluster: %s\n", n.Cluster.Would)
		}
	}
	if len(r.Nodes) == 0 {
		fmt.Fprintln(tw, "(no node answered discovery in provisioning mode)")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	fmt.Fprintf(&b, "\nsummary: %s\n%s\n", r.Summary, Guarantee)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// text is the answer in one line: what was asked, and the names of what would be sent.
func (a *Answer) text() string {
	switch {
	case a.Error != "":
		return "no answer"
	case a.Defer:
		return "defer"
	case a.Shutdown:
		return "shutdown"
	}
	parts := []string{"configuration keys " + list(a.ConfigurationKeys)}
	for _, f := range []struct {
		on   bool
		name string
	}{{a.Key, "key"}, {a.Certificate, "certificate"}, {a.CA, "ca"}, {a.ServerClaims, "server_claims"}} {
		if f.on {
			parts = append(parts, f.name)
		}
	}
	if len(a.ActionPolicies) > 0 {
		parts = append(parts, "action_policies "+list(a.ActionPolicies))
	}
	if len(a.OPAPolicies) > 0 {
		parts = append(parts, "opa_policies "+list(a.OPAPolicies))
	}
	if a.Upgrade != "" {
		parts = append(parts, "upgrade "+a.Upgrade)
	}
	return strings.Join(parts, "; ")
}

func list(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}
