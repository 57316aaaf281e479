// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// newRecoverCmd rewrites a stopped member's Raft membership when quorum is lost for good.
func newRecoverCmd() *cobra.Command {
	var id, dir string
	var peers []string
	var leaseTTL time.Duration
	cmd := &cobra.Command{
		Use:   "recover --node-id ID --data-dir DIR --peers id=host:port[,id=host:port...]",
		Short: "Offline: make the listed survivors the whole cluster after quorum is lost for good",
		Long: `Run on every surviving member while it is STOPPED, each time with the same --peers list (the
survivors' ids and Raft addresses), then start the survivors with serve as usual; they elect a
leader among themselves. Writes that only the lost members held are gone: start first the
survivor whose status showed the highest applied index.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := parsePeers(peers)
			if err != nil {
				return err
			}
			if id == "" || dir == "" {
				return errors.New("recover: --node-id and --data-dir are required")
			}
			if leaseTTL < 0 {
				return fmt.Errorf("recover: --lease-ttl %s is negative", leaseTTL)
			}
			cfg := coordinator.Config{ID: id, DataDir: dir, Timeouts: raftnode.LoopbackTimeouts(), Leases: lessor.Config{TTL: leaseTTL}}
			if err := coordinator.RecoverCluster(cfg, list); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "member %s recovered with %d peer(s); start it with serve\n", id, len(list))
			return nil
		},
	}
	cmd.Flags().StringVar(&id, "node-id", "", "this (stopped) member's Raft server id")
	cmd.Flags().StringVar(&dir, "data-dir", "", "this member's data directory")
	cmd.Flags().StringSliceVar(&peers, "peers", nil, "every survivor as id=host:port (its Raft address), this member included")
	cmd.Flags().DurationVar(&leaseTTL, "lease-ttl", 0, "the longest lease.ttl any member of the cluster ran before the loss, when the lost members ran a longer one than the survivors (default: the survivors' own): the first leader offers no node until a lease that long has ended")
	return cmd
}

// parsePeers reads id=host:port items, refusing empty parts and repeated ids.
func parsePeers(items []string) ([]raftnode.Peer, error) {
	if len(items) == 0 {
		return nil, errors.New("recover: --peers is required")
	}
	seen := map[string]bool{}
	out := make([]raftnode.Peer, 0, len(items))
	for _, item := range items {
		id, addr, ok := strings.Cut(item, "=")
		if !ok || id == "" || addr == "" || !strings.Contains(addr, ":") {
			return nil, fmt.Errorf("recover: --peers %q: want id=host:port", item)
		}
		if seen[id] {
			return nil, fmt.Errorf("recover: --peers names %s twice", id)
		}
		seen[id] = true
		out = append(out, raftnode.Peer{ID: id, Address: addr})
	}
	return out, nil
}
