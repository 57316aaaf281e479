// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/api"
)

// newOperatorCmds are the operator's verbs on named nodes: forget, ban, unban and move.
func newOperatorCmds() []*cobra.Command {
	return []*cobra.Command{
		newOperatorCmd(api.VerbForget, "forget IDENTITY...", "Remove decommissioned nodes from the ledger (refused while a lease holds or fences one, or inside go-choria's provisioning lock)", false),
		newOperatorCmd(api.VerbBan, "ban IDENTITY...", "Never offer these nodes to an edge until unbanned (shown in nodes --state banned)", false),
		newOperatorCmd(api.VerbUnban, "unban IDENTITY...", "Return banned nodes to the state they had when banned (retry gives a node another chance)", false),
		newOperatorCmd(api.VerbMove, "move IDENTITY... REGION", "Move nodes to another region: the only way a node changes region", true),
	}
}

func newOperatorCmd(verb, use, short string, region bool) *cobra.Command {
	// The member replaces By with the admin it authenticates. It is sent only because a member
	// of the build before named admins refuses a verb without it; such a member takes the admin
	// token alone, which this build records as "admin" too.
	req := api.OperatorRequest{Verb: verb, By: "admin"}
	var newRegion bool
	var by string
	long := short + ".\nEach node a lease holds or fences, an unknown node and one the verb would not change is refused by\n" +
		"name and the others are acted on; the exit status is 1 when any was refused. Every action is in the\n" +
		"node's history, the ledger's audit and the event stream under the name of the admin the token (or\n" +
		"client certificate) authenticates (auth.admins; the admin token is the admin named admin)."
	if region {
		long += "\nThe region must hold a node already, so a mistyped name is refused with the regions the ledger\n" +
			"knows; --new-region moves the nodes to a region that has none yet."
	}
	cmd := adminCommand(&cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
	}, func(args []string) error {
		req.Nodes = args
		if region {
			if len(args) < 2 {
				return errors.New("move needs one or more identities and then the region")
			}
			req.Nodes, req.Region = args[:len(args)-1], args[len(args)-1]
		}
		if by != "" {
			return errors.New("--by is gone: the history and the audit name the admin your token authenticates (auth.admins); put a note in --reason")
		}
		return req.Validate()
	}, func(a adminCall) error {
		if region && !newRegion {
			if err := knownRegion(a, req.Region); err != nil {
				return err
			}
		}
		resp, err := a.client.Operate(a.ctx, req)
		if err != nil {
			return err
		}
		if err := a.show(resp, func(w io.Writer) error { return printOperator(w, verb, resp) }); err != nil {
			return err
		}
		if len(resp.Rejected) > 0 {
			return fmt.Errorf("%s: %d node(s) refused", verb, len(resp.Rejected))
		}
		return nil
	})
	// --by named whoever the client said; the member names the admin it authenticated instead.
	// Kept hidden so a script that passes it is told so, not "unknown flag".
	cmd.Flags().StringVar(&by, "by", "", "gone: the audit names the authenticated admin")
	_ = cmd.Flags().MarkHidden("by")
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why, for the history and the audit")
	if region {
		cmd.Flags().BoolVar(&newRegion, "new-region", false, "the region is meant to be new: no node is in it yet")
	}
	return cmd
}

// knownRegion refuses a region no node of the ledger is in: a move there is most likely a typo,
// and the nodes would wait for an edge of a region nobody runs.
func knownRegion(a adminCall, region string) error {
	st, err := a.client.Status(a.ctx)
	if err != nil {
		return fmt.Errorf("read the regions the ledger knows: %w", err)
	}
	if _, ok := st.Regions[region]; ok {
		return nil
	}
	known := slices.Sorted(maps.Keys(st.Regions))
	names := "none"
	if len(known) > 0 {
		names = strings.Join(known, ", ")
	}
	return fmt.Errorf("move: no node is in region %q (regions the ledger knows: %s); check the name, or give --new-region to start a new region", region, names)
}

func printOperator(w io.Writer, verb string, r api.OperatorResponse) error {
	for _, id := range r.Done {
		fmt.Fprintf(w, "%s: %s\n", verb, id)
	}
	for _, rj := range r.Rejected {
		fmt.Fprintf(w, "refused %s: %s\n", rj.Identity, api.Printable(rj.Reason))
	}
	return nil
}
