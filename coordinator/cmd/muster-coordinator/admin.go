// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/api"
)

// adminCall is what an admin command works with once it is connected: the client, a context
// bounded by --timeout, and the command with its arguments for input and output.
type adminCall struct {
	ctx    context.Context
	client *api.Client
	cmd    *cobra.Command
	args   []string
	json   bool
}

// adminCommand gives cmd the connection flags and a RunE that runs check (bad input is refused
// before anyone is called), connects, and runs run under --timeout.
func adminCommand(cmd *cobra.Command, check func(args []string) error, run func(a adminCall) error) *cobra.Command {
	o := addAdminFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if check != nil {
			if err := check(args); err != nil {
				return err
			}
		}
		c, err := o.client()
		if err != nil {
			return err
		}
		ctx, cancel := o.context(cmd)
		defer cancel()
		return explainRefusal(run(adminCall{ctx: ctx, client: c, cmd: cmd, args: args, json: o.json}))
	}
	return cmd
}

// explainRefusal adds to a refused credential what to check: a 401 means the token (or client
// certificate) it sent opens nothing on the members; a 403 already names the role the call needs.
func explainRefusal(err error) error {
	if api.IsCode(err, api.CodeUnauthorized) {
		return fmt.Errorf("%w\ncheck the token this command sent (--admin-token, else %s): it must be the members' auth.admin_token or the token of an auth.admins entry", err, envAdminToken)
	}
	return err
}

// showing is the run of a command that asks for one answer and prints it.
func showing[T any](ask func(a adminCall) (T, error), text func(w io.Writer, v T) error) func(a adminCall) error {
	return func(a adminCall) error {
		v, err := ask(a)
		if err != nil {
			return err
		}
		return a.show(v, func(w io.Writer) error { return text(w, v) })
	}
}

// exitNoQuorum is status's exit code when the cluster cannot commit.
const exitNoQuorum = 2

// otherMemberWait bounds each other member's answer when the first one sees no quorum.
const otherMemberWait = 2 * time.Second

func newStatusCmd() *cobra.Command {
	return adminCommand(&cobra.Command{
		Use:   "status",
		Short: "Show members (reachable, last contact), leader, quorum, term, applied index, pause flag and per-region node counts",
		Long: "Show one member's view of the cluster: its members, whether it reaches each and when it last heard\n" +
			"from it, the leader, whether it sees a quorum, indexes, the pause flag and per-region node counts.\n" +
			"A member that sees no quorum may be the one cut off: the other members are then asked too, and\n" +
			"the view of one that sees a quorum is shown. Exits 2 when none does: the cluster cannot commit.",
		Args: cobra.NoArgs,
	}, nil, func(a adminCall) error {
		st, err := a.client.Status(a.ctx)
		if err != nil {
			return err
		}
		first := st
		if seesNoQuorum(st) {
			st = quorumView(a, st)
		}
		if err := a.show(st, func(w io.Writer) error {
			if st.ID != first.ID {
				fmt.Fprintf(w, "member %s, asked first, sees no quorum: %s\nthe view of member %s, which does:\n\n", first.ID, strings.ReplaceAll(first.NoQuorum, "\n", " "), st.ID)
			}
			return printStatus(w, st)
		}); err != nil {
			return err
		}
		if seesNoQuorum(st) {
			return &codedError{code: exitNoQuorum, err: fmt.Errorf("no quorum: %s", st.NoQuorum)}
		}
		return nil
	})
}

// seesNoQuorum is a member's answer that it sees no quorum (a build before quorum was reported
// says nothing either way).
func seesNoQuorum(st api.StatusResponse) bool { return st.Quorum != nil && !*st.Quorum }

// quorumView asks the members other than the one that answered st for their own view and returns
// the first that sees a quorum, else st.
func quorumView(a adminCall, st api.StatusResponse) api.StatusResponse {
	for _, m := range st.Members {
		if m.ID == st.ID || m.APIAddress == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(a.ctx, otherMemberWait)
		other, err := a.client.StatusOf(ctx, m.APIAddress)
		cancel()
		if err == nil && other.Quorum != nil && *other.Quorum {
			return other
		}
	}
	return st
}

func newNodesCmd() *cobra.Command {
	var f api.NodeFilter
	var state string
	var all bool
	cmd := adminCommand(&cobra.Command{
		Use:   "nodes",
		Short: "List nodes of the ledger, filtered by region and state",
		Args:  cobra.NoArgs,
	}, func([]string) error {
		f.State = api.NodeState(state)
		return f.Validate()
	}, showing(func(a adminCall) (api.NodesResponse, error) {
		var out api.NodesResponse
		for {
			page, err := a.client.Nodes(a.ctx, f)
			if err != nil {
				return out, err
			}
			out.Nodes = append(out.Nodes, page.Nodes...)
			out.Next = page.Next
			if page.Stale != nil {
				out.Stale = page.Stale
			}
			if !all || page.Next == "" {
				return out, nil
			}
			f.After = page.Next
		}
	}, printNodes))
	cmd.Flags().StringVar(&f.Region, "region", "", "only nodes of this region")
	cmd.Flags().StringVar(&state, "state", "", "only nodes in this state ("+stateNames()+")")
	cmd.Flags().StringVar(&f.After, "after", "", "start after this identity (the next of a previous page)")
	cmd.Flags().IntVar(&f.Limit, "limit", 500, "nodes per page")
	cmd.Flags().BoolVar(&all, "all", false, "fetch every page")
	return cmd
}

func newNodeCmd() *cobra.Command {
	return adminCommand(&cobra.Command{
		Use:   "node IDENTITY",
		Short: "Show one node with its history of transitions",
		Args:  cobra.ExactArgs(1),
	}, nil, showing(func(a adminCall) (api.Node, error) { return a.client.Node(a.ctx, a.args[0]) }, printNode))
}

func newPauseCmd() *cobra.Command {
	var reason string
	cmd := adminCommand(&cobra.Command{
		Use:   "pause",
		Short: "Stop every edge from starting work on a node (replicated)",
		Args:  cobra.NoArgs,
	}, nil, showing(func(a adminCall) (api.PauseResponse, error) {
		return a.client.Pause(a.ctx, api.PauseRequest{Reason: reason})
	}, printPause))
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown in status")
	return cmd
}

func newResumeCmd() *cobra.Command {
	return adminCommand(&cobra.Command{
		Use:   "resume",
		Short: "Let edges work again after a pause",
		Args:  cobra.NoArgs,
	}, nil, showing(func(a adminCall) (api.PauseResponse, error) { return a.client.Resume(a.ctx) }, printPause))
}

func newJoinCmd() *cobra.Command {
	var req api.JoinRequest
	cmd := adminCommand(&cobra.Command{
		Use:   "join",
		Short: "Add a member to the cluster",
		Args:  cobra.NoArgs,
	}, func([]string) error { return req.Validate() }, func(a adminCall) error {
		if _, err := a.client.Join(a.ctx, req); err != nil {
			return err
		}
		_, err := fmt.Fprintf(a.cmd.OutOrStdout(), "member %s (raft %s, api %s) joined\n", req.ID, req.RaftAddress, req.APIAddress)
		return err
	})
	cmd.Flags().StringVar(&req.ID, "id", "", "the new member's node id")
	cmd.Flags().StringVar(&req.RaftAddress, "raft-address", "", "host:port of its Raft transport")
	cmd.Flags().StringVar(&req.APIAddress, "api-address", "", "base URL of its API")
	cmd.Flags().BoolVar(&req.NonVoter, "non-voter", false, "join without a vote")
	return cmd
}

func newRemoveCmd() *cobra.Command {
	var req api.RemoveRequest
	return adminCommand(&cobra.Command{
		Use:   "remove ID",
		Short: "Remove a member from the cluster",
		Args:  cobra.ExactArgs(1),
	}, func(args []string) error {
		req = api.RemoveRequest{ID: args[0]}
		return req.Validate()
	}, func(a adminCall) error {
		if err := a.client.Remove(a.ctx, req); err != nil {
			return err
		}
		_, err := fmt.Fprintf(a.cmd.OutOrStdout(), "member %s removed\n", req.ID)
		return err
	})
}

func newSnapshotCmd() *cobra.Command {
	return adminCommand(&cobra.Command{
		Use:   "snapshot",
		Short: "Take a Raft snapshot of the ledger on the leader now",
		Args:  cobra.NoArgs,
	}, nil, showing(func(a adminCall) (api.SnapshotResponse, error) { return a.client.Snapshot(a.ctx) }, printSnapshot))
}

// stateNames lists the node states for help text, from the API so the help never misses one.
func stateNames() string {
	names := make([]string, 0, len(api.NodeStates()))
	for _, s := range api.NodeStates() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}
