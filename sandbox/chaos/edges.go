// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kballard/go-shellquote"

	"github.com/seed96588659/muster/pkg/testkit/proxy"
	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/stack/edgefile"
	"github.com/seed96588659/muster/sandbox/stack/edgeproc"
)

// EdgeSpec is what every edge shares.
type EdgeSpec struct {
	BinDir string // muster-edge and muster-helper-sample
	// Bin is the muster-edge the edges start on; BinDir's when empty. Every build runs
	// BinDir's helper.
	Bin         string
	Dir         string
	EdgeToken   string
	LeaseMargin time.Duration
	BatchSize   int
	Workers     int
}

// Edge is one muster-edge process in cluster mode. It reaches each coordinator member through
// a proxy of its own, so it can be partitioned from all of them while the others are not.
type Edge struct {
	Name    string // its Choria identity, which is also its edge name and its caller id's tail
	Region  string
	Proc    *edgeproc.Edge
	Proxies []*proxy.Proxy
	Monitor string // http://127.0.0.1:PORT
	// CallHistory is the file the edge records its calls to the coordinators in (call_history).
	CallHistory string
	Restarts    int
	cluster     *Cluster
}

// Caller is the caller id nodes record for the edge.
func (e *Edge) Caller() string { return "choria=" + e.Name }

// NewEdge prepares (does not start) edge n of region, running at site, with proxies to every
// member that hold each link for half the round trip between their places.
func NewEdge(spec EdgeSpec, l *lab.Lab, c *Cluster, region string, n, site int) (*Edge, error) {
	r := l.Region(region)
	if r == nil {
		return nil, fmt.Errorf("edge: no region %s in the lab", region)
	}
	clients := r.Clients()
	if n < 1 || n > len(clients) {
		return nil, fmt.Errorf("edge %d of region %s: the lab has %d client identities", n, region, len(clients))
	}
	client := clients[n-1]
	e := &Edge{Name: client.Identity, Region: region, cluster: c}
	c.Place(e.Name, site)
	var urls []string
	for _, m := range c.Members {
		to, _ := c.siteOf(m.ID)
		lat := c.link(site, to)
		p, err := proxy.New(proxy.Options{Name: fmt.Sprintf("%s->%s", e.Name, m.ID), Target: strings.TrimPrefix(m.API, "http://"),
			Latency: func(string) proxy.Latency { return lat }, Jitter: proxy.UniformJitter})
		if err != nil {
			return nil, err
		}
		e.Proxies = append(e.Proxies, p)
		urls = append(urls, "http://"+p.Addr())
	}
	e.CallHistory = filepath.Join(spec.Dir, e.Name+".calls.jsonl")
	sample := filepath.Join(spec.BinDir, edgefile.SampleHelper)
	file, err := edgefile.Write(l, region, sample)
	if err != nil {
		return nil, err
	}
	info := l.Info().Regions[region]
	bin := spec.Bin
	if bin == "" {
		bin = filepath.Join(spec.BinDir, "muster-edge")
	}
	e.Proc, err = edgeproc.New(edgeproc.Spec{
		Bin: bin, Config: file,
		Identity: client.Identity, ChoriaConfig: client.Config, Coordinators: urls, Token: spec.EdgeToken,
		Helper: shellquote.Join(sample, "--persistent",
			"--broker", info.BrokerURL, "--upgrade", l.UpgradeVersion(), "--ca", info.CA, "--ca-key", info.CAKey),
		Workers: spec.Workers, LogPath: filepath.Join(spec.Dir, e.Name+".log"),
		Args: []string{"--state-dir", filepath.Join(spec.Dir, e.Name+".state")},
		Env: []string{
			"MUSTER_EDGE_FEATURES_PKI=true",
			"MUSTER_EDGE_LEASE_MARGIN=" + spec.LeaseMargin.String(),
			"MUSTER_EDGE_BATCH_SIZE=" + strconv.Itoa(spec.BatchSize),
			"MUSTER_EDGE_CALL_HISTORY=" + e.CallHistory,
			"MCOLLECTIVE_CERTNAME=" + client.Identity,
		},
	})
	if err != nil {
		return nil, err
	}
	e.Monitor = e.Proc.Monitor
	return e, nil
}

// Start runs the edge and waits for its /readyz.
func (e *Edge) Start(ctx context.Context) error {
	if err := e.Proc.Start(); err != nil {
		return err
	}
	e.cluster.Track(e.Name, e.Proc.PID())
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	return e.Proc.WaitReady(ctx)
}

// Partition cuts the edge from every coordinator member under the name block (Lift lifts it):
// its own proxies (the configured addresses) and, by socket owner, the members' advertised API
// addresses it learns as leaders.
func (e *Edge) Partition(block string) {
	for _, p := range e.Proxies {
		p.Block(block, nil)
	}
	e.cluster.CutOff(block, e.Name)
}

// CutMembers cuts the edge's own proxies to the members pick chooses under the name block
// (Lift lifts it): a datacenter cut off from the edge's.
func (e *Edge) CutMembers(block string, pick func(*Member) bool) {
	for i, p := range e.Proxies {
		if pick(e.cluster.Members[i]) {
			p.Block(block, nil)
		}
	}
}

// Lift removes the block called block from the edge's own proxies and the members' (CutOff),
// leaving every other fault's blocks in place.
func (e *Edge) Lift(block string) {
	for _, p := range e.Proxies {
		p.Unblock(block)
	}
	e.cluster.Lift(block)
}

// Refused counts the edge's connections a partition cut or refused, at its own proxies and at
// the members' advertised API (where other processes' counts are included).
func (e *Edge) Refused() int64 {
	var n int64
	for _, p := range e.Proxies {
		n += p.Refused()
	}
	return n
}

// Close stops the edge and its proxies.
func (e *Edge) Close() {
	_ = e.Proc.Stop(20 * time.Second)
	for _, p := range e.Proxies {
		_ = p.Close()
	}
}
