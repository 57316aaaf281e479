// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/api"
)

func newEventsCmd() *cobra.Command {
	var follow bool
	var after, region, state string
	var from api.EventPosition
	cmd := adminCommand(&cobra.Command{
		Use:   "events",
		Short: "Print the ledger's transitions and operator actions as JSON lines (--follow waits for more)",
		Long: "Print the ledger's event log (each node transition and operator action, with its id INDEX.POS) as\n" +
			"JSON lines, from --after on. With --follow it waits for new events until interrupted, resuming on\n" +
			"another member after a disconnect or a change of leader; without, it prints what is there and\n" +
			"ends. A reader that falls behind the log's oldest event (it keeps the newest 100,000) gets a\n" +
			"\"reset\" event, also told on stderr: it missed events and should read the nodes again.",
	}, func(args []string) error {
		if after != "" {
			p, err := api.ParseEventPosition(after)
			if err != nil {
				return err
			}
			from = p
		}
		if state != "" && !api.NodeState(state).Valid() {
			return fmt.Errorf("--state %s: not one of %v", state, api.NodeStates())
		}
		return nil
	}, func(a adminCall) error {
		ctx := a.ctx
		if follow {
			ctx = a.cmd.Context() // until interrupted: --timeout bounds single answers
		}
		enc := json.NewEncoder(a.cmd.OutOrStdout())
		err := a.client.Events(ctx, from, api.EventFilter{Region: region, State: api.NodeState(state)}, follow, func(e api.Event) error {
			if e.Kind == api.EventReset {
				// A JSON line is easy to miss in a terminal, or for a script that reads only
				// transitions: the person is told too.
				fmt.Fprintf(a.cmd.ErrOrStderr(), "reset: missed events: the member's event log starts at %s, after the position read; read the nodes again (muster-coordinator nodes --all) to catch up\n", e.EventID())
			}
			return enc.Encode(e)
		})
		if follow && a.cmd.Context().Err() != nil {
			// An interrupt is how --follow ends: not a failure.
			return nil
		}
		return err
	})
	cmd.Flags().BoolVar(&follow, "follow", false, "wait for new events until interrupted")
	cmd.Flags().StringVar(&after, "after", "", "start after this Raft index or event id (INDEX or INDEX.POS)")
	cmd.Flags().StringVar(&region, "region", "", "only events of this region")
	cmd.Flags().StringVar(&state, "state", "", "only transitions into this state")
	return cmd
}
