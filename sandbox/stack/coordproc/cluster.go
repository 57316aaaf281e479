// SPDX-License-Identifier: Apache-2.0

package coordproc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/loopback"
	"github.com/seed96588659/muster/sandbox/internal/childproc"
)

// Defaults of Spec's zero durations.
const (
	DefaultStartTimeout  = 30 * time.Second
	DefaultLeaderTimeout = 90 * time.Second
	DefaultStopGrace     = 15 * time.Second
)

// portTries is how often a member's first start is tried on fresh ports: a port found free may
// be taken by another process before the member binds it.
const portTries = 3

// Spec is how every member of a cluster runs. Members are c1 to cSize; c1 bootstraps, the
// others join it.
type Spec struct {
	Bin  string // muster-coordinator
	Dir  string // each member's log (ID.log) and, unless Configure moves it, data dir (ID/)
	Size int    // members: c1 to cSize
	Auth Auth   // the members' credentials
	// Lease is the members' lease settings.
	Lease Lease
	// LogLevel is --log-level; "" passes none.
	LogLevel string
	// Configure, when set, adjusts each member before it starts: called for every try of its
	// first start, with that try's bind addresses (a caller's proxies in front of them go in the
	// advertised addresses).
	Configure func(*MemberConfig) error
	// OnStart, when set, is told each process id a member starts with, before its API answers.
	OnStart func(id string, pid int)
	// ProcessGroup starts each member in its own process group, so a terminal's Ctrl-C reaches
	// the caller alone, which stops the members in its own order. Members die with this process
	// either way (Pdeathsig on Linux): a killed caller or a panicking test leaves none behind.
	ProcessGroup bool
	// JoinAfterFirstLeads waits for c1 to lead alone before the others start; otherwise they
	// start at once and their joins retry until it leads.
	JoinAfterFirstLeads bool
	// StartTimeout bounds one member's start until its /healthz answers 200.
	StartTimeout time.Duration
	// LeaderTimeout bounds WaitLeader.
	LeaderTimeout time.Duration
	// StopGrace is how long a member has between SIGTERM and SIGKILL.
	StopGrace time.Duration
}

// MemberConfig is what Spec.Configure may change of one member before it starts.
type MemberConfig struct {
	ID   string // the member's id (read only)
	API  string // http://127.0.0.1:PORT, the member's listener (read only)
	Raft string // 127.0.0.1:PORT, its Raft bind address (read only)
	// AdvertiseAPI is http.advertise, the address leaders name to edges; "" advertises API.
	AdvertiseAPI string
	// AdvertiseRaft is raft.advertise, the address other members dial; "" advertises Raft.
	AdvertiseRaft string
	DataDir       string   // --data-dir; Spec.Dir/ID unless changed
	Env           []string // more KEY=VALUE for the member's environment
}

// Cluster is the running members of one Spec.
type Cluster struct {
	spec    Spec
	members []*Member
	status  *api.Client
}

// validate says which field of s is unusable.
func (s Spec) validate() error {
	switch {
	case s.Bin == "":
		return errors.New("coordproc: Spec.Bin is empty: the muster-coordinator binary is needed")
	case s.Dir == "":
		return errors.New("coordproc: Spec.Dir is empty: the members need a directory for data and logs")
	case s.Size < 1:
		return fmt.Errorf("coordproc: Spec.Size is %d: a cluster needs a member at least", s.Size)
	case s.Auth.AdminToken == "":
		return errors.New("coordproc: Spec.Auth.AdminToken is empty: the leader is found through the admin status")
	}
	return nil
}

func (s Spec) withDefaults() Spec {
	if s.StartTimeout == 0 {
		s.StartTimeout = DefaultStartTimeout
	}
	if s.LeaderTimeout == 0 {
		s.LeaderTimeout = DefaultLeaderTimeout
	}
	if s.StopGrace == 0 {
		s.StopGrace = DefaultStopGrace
	}
	return s
}

// Start starts c1 with --bootstrap, then the others with --join c1, and waits for a ready
// leader of all of them. On an error every member it started is stopped again.
func Start(ctx context.Context, spec Spec) (*Cluster, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	spec = spec.withDefaults()
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("coordproc: cluster dir: %w", err)
	}
	c := &Cluster{spec: spec}
	fail := func(err error) (*Cluster, error) {
		return nil, errors.Join(err, c.Stop())
	}
	for i := 1; i <= spec.Size; i++ {
		join := ""
		if i > 1 {
			join = c.members[0].API
		}
		m, err := c.startNew(ctx, fmt.Sprintf("c%d", i), join)
		if err != nil {
			return fail(err)
		}
		c.members = append(c.members, m)
		if i == 1 {
			// Status reads name their member (StatusOf), so c1's address is all the client needs.
			if c.status, err = api.NewClient([]string{m.API}, api.WithToken(spec.Auth.AdminToken),
				api.WithHTTPClient(&http.Client{Timeout: statusReadWait}), api.WithAttempts(1)); err != nil {
				return fail(fmt.Errorf("coordproc: status client: %w", err))
			}
			if spec.JoinAfterFirstLeads && spec.Size > 1 {
				if _, _, err := c.WaitLeader(ctx, 1, ""); err != nil {
					return fail(err)
				}
			}
		}
	}
	if _, _, err := c.WaitLeader(ctx, spec.Size, ""); err != nil {
		return fail(fmt.Errorf("%w\n%s", err, c.tails()))
	}
	return c, nil
}

// startNew starts member id on fresh loopback ports, trying others when it does not come up.
func (c *Cluster) startNew(ctx context.Context, id, join string) (*Member, error) {
	s := c.spec
	var lastErr error
	for range portTries {
		apiAddr, err := loopback.StableAddr()
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", id, err)
		}
		raftAddr, err := loopback.StableAddr()
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", id, err)
		}
		cfg := &MemberConfig{ID: id, API: "http://" + apiAddr, Raft: raftAddr, DataDir: filepath.Join(s.Dir, id)}
		if s.Configure != nil {
			if err := s.Configure(cfg); err != nil {
				return nil, fmt.Errorf("member %s: configure: %w", id, err)
			}
		}
		m := c.newMember(cfg, join)
		if lastErr = m.start(ctx); lastErr == nil {
			return m, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// newMember lays out cfg's process: the flags every member passes, then the Spec's settings.
func (c *Cluster) newMember(cfg *MemberConfig, join string) *Member {
	s := c.spec
	args := []string{"serve",
		"--node-id", cfg.ID,
		"--data-dir", cfg.DataDir,
		"--raft-bind", cfg.Raft,
		"--http-bind", strings.TrimPrefix(cfg.API, "http://"),
	}
	if cfg.AdvertiseRaft != "" {
		args = append(args, "--raft-advertise", cfg.AdvertiseRaft)
	}
	if cfg.AdvertiseAPI != "" {
		args = append(args, "--http-advertise", cfg.AdvertiseAPI)
	}
	args = append(args, s.Lease.flags()...)
	if s.LogLevel != "" {
		args = append(args, "--log-level", s.LogLevel)
	}
	// A restart passes the same flags, as an unchanged unit file would: joining again is a no-op.
	if join == "" {
		args = append(args, "--bootstrap")
	} else {
		args = append(args, "--join", join)
	}
	return &Member{
		ID: cfg.ID, API: cfg.API, Raft: cfg.Raft, DataDir: cfg.DataDir,
		LogPath: filepath.Join(s.Dir, cfg.ID+".log"),
		proc: &childproc.Proc{
			Name: "member " + cfg.ID, Bin: s.Bin, Args: args, Env: append(s.Auth.env(), cfg.Env...),
			LogPath: filepath.Join(s.Dir, cfg.ID+".log"), Group: s.ProcessGroup,
		},
		timeout: s.StartTimeout, grace: s.StopGrace, onStart: s.OnStart,
	}
}

// Members are the cluster's members, c1 first.
func (c *Cluster) Members() []*Member { return append([]*Member(nil), c.members...) }

// Member is the member with id, nil if there is none.
func (c *Cluster) Member(id string) *Member {
	for _, m := range c.members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// URLs are the members' API base URLs, c1 first.
func (c *Cluster) URLs() []string {
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.API
	}
	return out
}

// Stop stops every member at once (SIGTERM, SIGKILL after the grace period), so the whole
// stop is bounded by one grace period; the error names each member that did not end cleanly.
func (c *Cluster) Stop() error {
	errs := make([]error, len(c.members))
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Go(func() { errs[i] = m.Stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Logs is the last n bytes of every member's log, each under a header line, for a failure.
func (c *Cluster) Logs(n int) string {
	var b strings.Builder
	for _, m := range c.members {
		out, err := os.ReadFile(m.LogPath)
		if err != nil {
			out = []byte(err.Error())
		}
		if len(out) > n {
			out = out[len(out)-n:]
		}
		fmt.Fprintf(&b, "---- %s (%s) ----\n%s\n", m.ID, m.LogPath, out)
	}
	return b.String()
}

// tails is the last lines of every member's log, for an error.
func (c *Cluster) tails() string {
	var b strings.Builder
	for _, m := range c.members {
		fmt.Fprintf(&b, "log of %s (%s):\n%s\n", m.ID, m.LogPath, tailLines(m.LogPath, logTailLines))
	}
	return strings.TrimRight(b.String(), "\n")
}
