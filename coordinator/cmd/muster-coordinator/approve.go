// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/api"
)

// newApproveCmd is the held queue's approve: named held nodes, or every held node of a region.
func newApproveCmd() *cobra.Command {
	req := api.OperatorRequest{Verb: api.VerbApprove}
	cmd := adminCommand(&cobra.Command{
		Use:   "approve IDENTITY... | approve --region REGION --reason TEXT --all",
		Short: "Let held nodes be provisioned: held -> waiting (see nodes --state held; ban denies one)",
		Long: "Let held nodes be provisioned: each goes from held to waiting and is offered to an edge (not\n" +
			"inside go-choria's provisioning lock of the edge that last called it). With --region and --all,\n" +
			"every node held in the region, which needs a --reason. A node that is not held (or no longer in\n" +
			"the region) is refused by name and the others are approved; the exit status is 1 when any was\n" +
			"refused. Check what each hold means first: docs/approvals.md. Every approve is in the node's\n" +
			"history and the ledger's audit under the admin your token authenticates. Needs cluster protocol 8.",
	}, func(args []string) error {
		req.Nodes = args
		if !req.All && req.Region != "" {
			return errors.New("region: names the region of --all; give --all to approve every node held there, or name the nodes")
		}
		if !req.All && len(args) == 0 {
			return errors.New("approve needs the identities of held nodes, or --region REGION --reason TEXT --all")
		}
		return req.Validate()
	}, func(a adminCall) error {
		resp, err := a.client.Operate(a.ctx, req)
		if err != nil {
			return err
		}
		if err := a.show(resp, func(w io.Writer) error { return printApprove(w, req, resp) }); err != nil {
			return err
		}
		if len(resp.Rejected) > 0 {
			return fmt.Errorf("approve: %d node(s) refused", len(resp.Rejected))
		}
		return nil
	})
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why, for the history and the audit (needed with --all)")
	cmd.Flags().StringVar(&req.Region, "region", "", "with --all: the region whose held nodes are approved")
	cmd.Flags().BoolVar(&req.All, "all", false, "approve every node held in --region")
	return cmd
}

func printApprove(w io.Writer, req api.OperatorRequest, r api.OperatorResponse) error {
	if req.All && len(r.Done) == 0 && len(r.Rejected) == 0 {
		_, err := fmt.Fprintf(w, "no node is held in region %s\n", req.Region)
		return err
	}
	return printOperator(w, api.VerbApprove, r)
}
