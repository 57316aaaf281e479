// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed96588659/muster/pkg/api"
)

// show prints v as indented JSON with --json, else as text.
func (a adminCall) show(v any, text func(w io.Writer) error) error {
	if !a.json {
		return text(a.cmd.OutOrStdout())
	}
	enc := json.NewEncoder(a.cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// protocolText shows a protocol a member of a build before protocols does not send: it runs 1.
func protocolText(v int) string {
	if v == 0 {
		return "1 (not reported)"
	}
	return fmt.Sprint(v)
}

func printStatus(w io.Writer, st api.StatusResponse) error {
	leader := st.LeaderID
	if leader == "" {
		leader = "none"
	}
	paused := yesNo(st.Paused)
	if st.Paused && st.PauseReason != "" {
		paused += " (" + api.Printable(st.PauseReason) + ")"
	}
	fmt.Fprintf(w, "member %s: %s, leader %s, term %d, applied %d, commit %d, leases %d, paused %s\n",
		st.ID, st.State, leader, st.Term, st.AppliedIndex, st.CommitIndex, st.LeasesActive, paused)
	fmt.Fprintf(w, "cluster protocol %s, this member applies up to %s\n", protocolText(st.ClusterProtocol), protocolText(st.Protocol))
	if q := quorumText(st); q != "" {
		fmt.Fprintln(w, q)
	}
	if h := st.GrantsHeld; h != nil {
		left := ""
		if h.Remaining > 0 {
			left = fmt.Sprintf(", %s left", time.Duration(h.Remaining).Round(time.Second))
		}
		fmt.Fprintf(w, "grants held after a recover until %s (ledger time%s): %s\n", stamp(h.Until), left, api.Printable(h.Reason))
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if c := st.Caller; c != nil {
		fmt.Fprintf(w, "you are %s, role %s\n", api.Printable(c.Name), c.Role)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tRAFT\tAPI\tVOTER\tLEADER\tROUND TRIP\tCONTACT")
	for _, m := range st.Members {
		rtt := "-" // itself, or not measured yet
		if m.RoundTrip > 0 {
			rtt = time.Duration(m.RoundTrip).Round(10 * time.Microsecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.RaftAddress, m.APIAddress, yesNo(m.Voter), yesNo(m.Leader), rtt, contactText(st.ID, m))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	regions := make([]string, 0, len(st.Regions))
	for r := range st.Regions {
		regions = append(regions, r)
	}
	sort.Strings(regions)
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{"REGION"}
	for _, s := range api.NodeStates() {
		head = append(head, strings.ToUpper(string(s)))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range regions {
		row := []string{r}
		for _, s := range api.NodeStates() {
			row = append(row, fmt.Sprint(st.Regions[r][s]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}

// quorumText is the line that says whether the answering member sees a quorum and how close the
// cluster is to losing it; empty from a build that does not report it.
func quorumText(st api.StatusResponse) string {
	if st.Quorum == nil {
		return ""
	}
	if !*st.Quorum {
		return "no quorum: " + strings.ReplaceAll(st.NoQuorum, "\n", " ")
	}
	voters, reached := 0, 0
	for _, m := range st.Members {
		if m.Voter {
			voters++
			if m.Reachable != nil && *m.Reachable {
				reached++
			}
		}
	}
	spare := reached - (voters/2 + 1)
	switch {
	case spare < 0:
		return fmt.Sprintf("quorum: yes, through leader %s (this member reaches %d of %d voters)", st.LeaderID, reached, voters)
	case spare == 0 && voters > 1:
		return fmt.Sprintf("quorum: yes, %d of %d voters reachable; losing one more stops every write", reached, voters)
	}
	return fmt.Sprintf("quorum: yes, %d of %d voters reachable", reached, voters)
}

// contactText says whether the answering member reaches m and when it last heard from it.
func contactText(self string, m api.Member) string {
	switch {
	case m.ID == self:
		return "self"
	case m.Reachable == nil:
		return "-" // not probed yet, or a build that does not report it
	}
	state := "unreachable"
	if *m.Reachable {
		state = "reachable"
	}
	if m.LastContact == nil {
		return state + ", never heard from"
	}
	return fmt.Sprintf("%s, last contact %s ago", state, time.Duration(*m.LastContact).Round(100*time.Millisecond))
}

func printNodes(w io.Writer, out api.NodesResponse) error {
	if err := printStale(w, out.Stale); err != nil {
		return err
	}
	if heldOnly(out.Nodes) {
		return printHeld(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IDENTITY\tREGION\tSTATE\tATTEMPTS\tEDGE\tLEASE\tVERSION\tLAST ERROR")
	for _, n := range out.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", n.Identity, n.Region, n.State, n.Attempts, dash(n.Edge), dash(n.LeaseID), dash(api.Printable(n.InventoryVersion)), dash(cell(n.LastError)))
	}
	return endPage(w, tw, out.Next)
}

// endPage flushes a page's table and says how to read the next page, if any.
func endPage(w io.Writer, tw *tabwriter.Writer, next string) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	if next != "" {
		_, err := fmt.Fprintf(w, "\nmore: --after %s (or --all)\n", next)
		return err
	}
	return nil
}

// heldOnly reports whether every node listed is held (nodes --state held): the queue is shown
// with why and since when each node waits.
func heldOnly(nodes []api.Node) bool {
	for _, n := range nodes {
		if n.State != api.StateHeld {
			return false
		}
	}
	return len(nodes) > 0
}

// printHeld lists the held queue: why each node is held, since when, which edge saw it, and
// what to check before approving.
func printHeld(w io.Writer, out api.NodesResponse) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IDENTITY\tREGION\tHELD\tSINCE\tEDGE\tDETAIL")
	for _, n := range out.Nodes {
		h := n.Hold
		if h == nil {
			h = &api.Hold{}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Identity, n.Region, dash(h.Reason), stamp(h.At), dash(h.Edge), dash(api.Printable(h.Detail)))
	}
	return endPage(w, tw, out.Next)
}

func printNode(w io.Writer, n api.Node) error {
	if err := printStale(w, n.Stale); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("identity", n.Identity)
	row("region", n.Region)
	row("state", string(n.State))
	row("attempts", fmt.Sprint(n.Attempts))
	row("edge", dash(n.Edge))
	row("lease", dash(n.LeaseID)+" token "+fmt.Sprint(n.LeaseToken))
	row("inventory version", dash(api.Printable(n.InventoryVersion)))
	row("target version", dash(api.Printable(n.TargetVersion)))
	row("last error", dash(api.Printable(n.LastError)))
	row("discovered", stamp(n.DiscoveredAt))
	row("leased", stamp(n.LeasedAt))
	row("finished", stamp(n.FinishedAt))
	row("not before", stamp(n.NotBefore))
	if h := n.Hold; h != nil {
		row("held", fmt.Sprintf("%s since %s, seen by edge %s: %s", h.Reason, stamp(h.At), dash(h.Edge), dash(api.Printable(h.Detail))))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nhistory:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tFROM\tTO\tREASON\tEDGE\tLEASE\tTOKEN\tERROR")
	for _, h := range n.History {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", stamp(h.At), dash(string(h.From)), h.To, dash(api.Printable(h.Reason)), dash(h.Edge), dash(h.LeaseID), h.LeaseToken, dash(api.Printable(h.Error)))
	}
	return tw.Flush()
}

func printPause(w io.Writer, p api.PauseResponse) error {
	if p.Paused {
		_, err := fmt.Fprintf(w, "paused %s\n", api.Printable(p.Reason))
		return err
	}
	_, err := fmt.Fprintln(w, "running")
	return err
}

func printSnapshot(w io.Writer, s api.SnapshotResponse) error {
	_, err := fmt.Fprintf(w, "snapshot %s at index %d, term %d, %d bytes\n", s.ID, s.Index, s.Term, s.Size)
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell is node text for a column of a table: escaped as api.Printable does (a newline too, as
// every control character: text a node sent is data), and cut to keep the table readable. A
// detail view prints api.Printable's whole text instead.
func cell(s string) string {
	s = api.Printable(s)
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// printStale says, before the answer, that a member answered from its own copy of the ledger.
func printStale(w io.Writer, st *api.Staleness) error {
	if st == nil {
		return nil
	}
	contact := "never heard from a leader"
	if st.LastContact >= 0 {
		contact = fmt.Sprintf("last heard from a leader %s ago", time.Duration(st.LastContact).Round(time.Millisecond))
	}
	_, err := fmt.Fprintf(w, "stale: member %s answered from its own copy of the ledger (applied index %d; %s): %s\n\n", st.Member, st.AppliedIndex, contact, st.Reason)
	return err
}
