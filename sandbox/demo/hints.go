// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// statusPagePath is coordinator/statuspage.Path, where a member serves its status page; copied
// because the sandbox module does not require the coordinator module.
const statusPagePath = "/status/"

// watchPeriod is how often the idle run reads the cluster's status for the leader lines.
const watchPeriod = time.Second

// hints says what to try while everything keeps running, with this run's addresses and pids.
// The admin token stays in the credentials file: the commands read it from the environment.
func (r *runner) hints() {
	o := r.o
	coord := r.binPath(CoordinatorName)
	addrs := strings.Join(r.cluster.URLs(), ",")
	creds := filepath.Join(o.Dir, CredentialsName)
	cmd := o.Command
	if cmd == "" {
		cmd = "muster-sandbox"
	}
	r.say("\n== everything keeps running; in another shell, try:")
	r.say("   . %s    # sets MUSTER_AUTH_ADMIN_TOKEN for the commands below (mode 0600; the token stays off the screen)", creds)
	r.say("   %s status --addr %s", coord, addrs)
	r.say("   %s nodes --addr %s --region %s --state abandoned", coord, addrs, o.Regions[0])
	if v, err := r.cluster.view(context.Background()); err == nil && v.Leader != "" {
		r.say("   kill -9 %d    # the leader, %s: the others elect a new one, the edges follow it; watch the leader lines here", v.LeaderPID, v.Leader)
	}
	r.say("   %s pause --addr %s --reason 'trying it'    # every edge stops starting hosts (choria_provisioner_paused 1)", coord, addrs)
	r.say("   %s resume --addr %s", coord, addrs)
	for _, m := range r.cluster.Members() {
		if m.Running() {
			r.say("   open %s%s    # the status page (paste the admin token from %s)", m.API, statusPagePath, creds)
			break
		}
	}
	for _, e := range r.edges {
		r.say("   curl -s %s/metrics | grep -E '^(choria_provisioner|muster_edge)_'    # the %s edge", e.Monitor, e.region)
	}
	r.say("   tail -f %s", filepath.Join(o.Dir, EdgeLogName(o.Regions[0])))
	r.say("   %s report --dir %s    # what the nodes received, in short (--json: every node)", cmd, filepath.Join(o.Dir, LabDirName))
	r.say("   the lab for any Choria client: %s", r.lab.InfoFile())
	r.say("Press Ctrl-C to stop the edges, the coordinators, the nodes and the brokers.")
}

// binPath is a binary of BinDir, relative to the working directory when it is below it.
func (r *runner) binPath(name string) string {
	p := filepath.Join(r.o.BinDir, name)
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

// watch keeps everything running until ctx ends, printing a line when the leader, the term or
// the pause flag changes, or a coordinator exits; an edge that exits ends the run.
func (r *runner) watch(ctx context.Context) error {
	exited := r.anyEdgeExited()
	tick := time.NewTicker(watchPeriod)
	defer tick.Stop()
	var last ClusterView
	var lastErr error
	gone := map[string]bool{}
	for {
		for _, m := range r.cluster.Members() {
			if !m.Running() && !gone[m.ID] {
				gone[m.ID] = true
				r.say("   %s coordinator %s (pid %d) exited: %v", time.Now().Format(time.TimeOnly), m.ID, m.PID(), m.ExitErr())
			}
		}
		v, err := r.cluster.view(ctx)
		switch {
		case err != nil && lastErr == nil && ctx.Err() == nil:
			r.say("   %s coordinators: %s", time.Now().Format(time.TimeOnly), describeView(v, err))
		case err == nil && (lastErr != nil || v.Leader != last.Leader || v.Term != last.Term || v.Paused != last.Paused):
			r.say("   %s coordinators: %s", time.Now().Format(time.TimeOnly), describeView(v, nil))
		}
		if err == nil {
			last = v
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil
		case e := <-exited:
			return fmt.Errorf("edge %s exited while idle: %v (log: %s)", e.region, e.ExitErr(), logTail(e.LogPath))
		case <-tick.C:
		}
	}
}
