// SPDX-License-Identifier: Apache-2.0

package app

import (
	"fmt"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/edge/election"
)

// remedyStreams is what an operator does when leader_election is set and the broker cannot
// hold the election.
const remedyStreams = "enable Choria Streams on the provisioning broker (plugin.choria.network.stream.store), " +
	"which choria-provisioner's leader_election needs as well, or set leader_election to false"

// campaign opens the edge's place in choria-provisioner's election over the discovery
// connection (the provisioning broker, as its provisioning user), when leader_election asks for
// it; nil otherwise.
func (a *App) campaign(cfg *config.Config, name string, o Options) (*election.Campaign, error) {
	if !cfg.LeaderElection {
		return nil, nil
	}
	eo := election.Options{Name: name, Logger: a.log}
	if len(o.ElectionBackoff.Millis) > 0 {
		eo.Backoff = o.ElectionBackoff
	}
	c, err := election.Open(a.finder.NATS(), eo)
	if err != nil {
		return nil, withRemedy(fmt.Errorf("leader_election: %w", err), remedyStreams)
	}
	a.log.Info("leader election", "election", election.Key, "bucket", election.Bucket, "name", name, "ttl", c.TTL())
	return c, nil
}
