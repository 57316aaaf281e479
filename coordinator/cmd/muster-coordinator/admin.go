// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/api"
)

func newStatusCmd() *cobra.Command {
	var o *adminOpts
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show members, leader, term, applied index, pause flag and per-region node counts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			st, err := c.Status(ctx)
			if err != nil {
				return err
			}
			return output(cmd, o.json, st, func() error { return printStatus(cmd.OutOrStdout(), st) })
		},
	}
	o = addAdminFlags(cmd)
	return cmd
}

func newNodesCmd() *cobra.Command {
	var o *adminOpts
	var f api.NodeFilter
	var state string
	var all bool
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List nodes of the ledger, filtered by region and state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.State = api.NodeState(state)
			if err := f.Validate(); err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			var out api.NodesResponse
			for {
				page, err := c.Nodes(ctx, f)
				if err != nil {
					return err
				}
				out.Nodes = append(out.Nodes, page.Nodes...)
				out.Next = page.Next
				if !all || page.Next == "" {
					break
				}
				f.After = page.Next
			}
			return output(cmd, o.json, out, func() error { return printNodes(cmd.OutOrStdout(), out) })
		},
	}
	cmd.Flags().StringVar(&f.Region, "region", "", "only nodes of this region")
	cmd.Flags().StringVar(&state, "state", "", "only nodes in this state (waiting, leased, provisioned, deferred, shutdown, abandoned)")
	cmd.Flags().StringVar(&f.After, "after", "", "start after this identity (the next of a previous page)")
	cmd.Flags().IntVar(&f.Limit, "limit", 500, "nodes per page")
	cmd.Flags().BoolVar(&all, "all", false, "fetch every page")
	o = addAdminFlags(cmd)
	return cmd
}

func newNodeCmd() *cobra.Command {
	var o *adminOpts
	cmd := &cobra.Command{
		Use:   "node IDENTITY",
		Short: "Show one node with its history of transitions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			n, err := c.Node(ctx, args[0])
			if err != nil {
				return err
			}
			return output(cmd, o.json, n, func() error { return printNode(cmd.OutOrStdout(), n) })
		},
	}
	o = addAdminFlags(cmd)
	return cmd
}

func newPauseCmd() *cobra.Command {
	var o *adminOpts
	var reason string
	cmd := &cobra.Command{
		Use:   "pause",
		Short: "Stop every edge from starting work on a node (replicated)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			p, err := c.Pause(ctx, api.PauseRequest{Reason: reason})
			if err != nil {
				return err
			}
			return output(cmd, o.json, p, func() error { return printPause(cmd.OutOrStdout(), p) })
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown in status")
	o = addAdminFlags(cmd)
	return cmd
}

func newResumeCmd() *cobra.Command {
	var o *adminOpts
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Let edges work again after a pause",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			p, err := c.Resume(ctx)
			if err != nil {
				return err
			}
			return output(cmd, o.json, p, func() error { return printPause(cmd.OutOrStdout(), p) })
		},
	}
	o = addAdminFlags(cmd)
	return cmd
}

func newJoinCmd() *cobra.Command {
	var o *adminOpts
	var req api.JoinRequest
	cmd := &cobra.Command{
		Use:   "join",
		Short: "Add a member to the cluster",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := req.Validate(); err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			if err := c.Join(ctx, req); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "member %s (raft %s, api %s) joined\n", req.ID, req.RaftAddress, req.APIAddress)
			return err
		},
	}
	cmd.Flags().StringVar(&req.ID, "id", "", "the new member's node id")
	cmd.Flags().StringVar(&req.RaftAddress, "raft-address", "", "host:port of its Raft transport")
	cmd.Flags().StringVar(&req.APIAddress, "api-address", "", "base URL of its API")
	cmd.Flags().BoolVar(&req.NonVoter, "non-voter", false, "join without a vote")
	o = addAdminFlags(cmd)
	return cmd
}

func newRemoveCmd() *cobra.Command {
	var o *adminOpts
	cmd := &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a member from the cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := api.RemoveRequest{ID: args[0]}
			if err := req.Validate(); err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			if err := c.Remove(ctx, req); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "member %s removed\n", req.ID)
			return err
		},
	}
	o = addAdminFlags(cmd)
	return cmd
}

func newSnapshotCmd() *cobra.Command {
	var o *adminOpts
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Take a Raft snapshot of the ledger on the leader now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			ctx, cancel := o.context(cmd)
			defer cancel()
			s, err := c.Snapshot(ctx)
			if err != nil {
				return err
			}
			return output(cmd, o.json, s, func() error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "snapshot %s at index %d, term %d, %d bytes\n", s.ID, s.Index, s.Term, s.Size)
				return err
			})
		},
	}
	o = addAdminFlags(cmd)
	return cmd
}
