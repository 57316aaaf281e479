// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/config"
	"github.com/seed96588659/muster/coordinator/ledger"
	"github.com/seed96588659/muster/coordinator/lessor"
	"github.com/seed96588659/muster/coordinator/raftnode"
)

// openCore starts the member's Raft node, ledger and lease manager from the checked configuration;
// raftTLS is nil unless raft.tls is set.
// members is the HTTP client towards other members; the leader reads their protocol with it.
func openCore(cfg config.Config, raftTLS *tls.Config, members *http.Client, logger *slog.Logger, reg prometheus.Registerer) (*coordinator.Service, error) {
	lc := lessor.DefaultConfig()
	lc.TTL = cfg.Lease.TTL
	lc.Grace = cfg.Lease.Grace
	lc.MaxNodes = cfg.Lease.MaxNodes
	lc.MaxWait = cfg.Lease.MaxWait
	lc.Extension = 0 // the core takes one election timeout
	lc.Policy = ledger.Policy{
		MaxAttempts:      cfg.Lease.MaxAttempts,
		BackoffBase:      cfg.Lease.RetryBackoff,
		BackoffMax:       cfg.Lease.RetryBackoffMax,
		LockWindow:       cfg.Lease.LockWindow,
		HistoryLimit:     cfg.Ledger.HistoryLength,
		ReprovisionAfter: cfg.Lease.ReprovisionAfter,
	}
	if err := lc.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("lease policy: %w", err)
	}
	return coordinator.New(coordinator.Config{
		ID:            cfg.NodeID,
		DataDir:       cfg.DataDir,
		RaftBind:      cfg.Raft.Bind,
		RaftAdvertise: cfg.Raft.Advertise,
		APIAddress:    cfg.HTTP.Advertise,
		Bootstrap:     cfg.Bootstrap,
		// A member that waits for bootstrap_expect members opens as a joining one does: without a
		// vote until it bootstraps with them or is promoted by the leader of the cluster it finds.
		Join: len(cfg.Join) > 0 || cfg.BootstrapExpect > 0,
		Timeouts: raftnode.Timeouts{
			Heartbeat:   cfg.Raft.HeartbeatTimeout,
			Election:    cfg.Raft.ElectionTimeout,
			LeaderLease: cfg.Raft.LeaderLeaseTimeout,
			Commit:      cfg.Raft.CommitTimeout,
		},
		Leases:            lc,
		MemberClient:      members,
		AdminToken:        cfg.Auth.AdminToken,
		RaftTLS:           raftTLS,
		RaftMemberName:    cfg.TLS.MemberName,
		Warnings:          cfg.Warnings,
		MaxFirstSeen:      cfg.Ledger.MaxFirstSeen,
		Approval:          ledgerApproval(cfg.Approval),
		SnapshotThreshold: cfg.Raft.SnapshotThreshold,
		SnapshotInterval:  cfg.Raft.SnapshotInterval,
		Logger:            logger,
		Registry:          reg,
	})
}

// ledgerApproval is the hold policy the leader stamps into registrations; nil when every
// approval key is off.
func ledgerApproval(a config.Approval) *ledger.Approval {
	if len(a.Manual) == 0 && !a.ReprovisionHold && a.FlapCount == 0 {
		return nil
	}
	return &ledger.Approval{Manual: a.Manual, ReprovisionHold: a.ReprovisionHold, FlapCount: a.FlapCount, FlapWindow: a.FlapWindow}
}
