// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/api"
)

func newRetryCmd() *cobra.Command {
	var req api.RetryRequest
	var state string
	cmd := adminCommand(&cobra.Command{
		Use:   "retry [IDENTITY...]",
		Short: "Send abandoned, gone, deferred or failed nodes back to waiting, attempts reset (named, or --region with --state)",
		Long: "Send nodes back to waiting with their attempts reset and no backoff: the named ones, or every node of\n" +
			"--region in --state (" + retryableNames() + "), at most --limit per call. A leased node is never\n" +
			"touched; naming one, an unknown node or one in another state refuses the whole call. --dry-run\n" +
			"prints what would move and moves nothing.",
	}, func(args []string) error {
		req.Nodes = args
		req.State = api.NodeState(state)
		return req.Validate()
	}, showing(func(a adminCall) (api.RetryResponse, error) { return a.client.Retry(a.ctx, req) }, printRetry))
	cmd.Flags().StringVar(&req.Region, "region", "", "retry the nodes of this region that are in --state")
	cmd.Flags().StringVar(&state, "state", "", "with --region: the state to retry from ("+retryableNames()+")")
	cmd.Flags().IntVar(&req.Limit, "limit", 0, fmt.Sprintf("with --region: at most this many nodes (default and most %d)", api.MaxRetryNodes))
	cmd.Flags().BoolVar(&req.DryRun, "dry-run", false, "print what would move; change nothing")
	return cmd
}

func printRetry(w io.Writer, r api.RetryResponse) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "IDENTITY\tREGION\tFROM\tATTEMPTS\tLAST ERROR")
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", n.Identity, n.Region, n.From, n.Attempts, dash(cell(n.LastError)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.DryRun {
		fmt.Fprintf(w, "\nwould retry %d node(s); nothing changed (dry run)\n", len(r.Nodes))
	} else {
		fmt.Fprintf(w, "\nretried %d node(s): waiting, attempts reset\n", len(r.Nodes))
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "skipped %s: %s\n", s.Identity, api.Printable(s.Reason))
	}
	if r.More {
		_, err := fmt.Fprintln(w, "more: the region holds more such nodes than the limit; run it again")
		return err
	}
	return nil
}

// retryableNames lists the states a retry moves, for help text.
func retryableNames() string {
	names := make([]string, 0, len(api.RetryableStates()))
	for _, s := range api.RetryableStates() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}
