// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/pkg/testkit/proxy"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

// linkHarness is the chaos runner's proxies without its processes: three members' Raft and API
// proxies and three edges' own proxies, all in front of echo servers. A process is told apart
// by the loopback address it dials from (c1 from 127.0.0.11, edge j from 127.0.0.2j), where
// the runner reads socket owners from /proc.
type linkHarness struct {
	c     *Cluster
	edges []*Edge
	from  map[string]net.IP
}

// newLinkHarness starts the proxies, closed with the test.
func newLinkHarness(t *testing.T) *linkHarness {
	t.Helper()
	if ln, err := net.Listen("tcp", "127.0.0.11:0"); err != nil {
		t.Skipf("needs every 127.0.0.0/8 address on the loopback (Linux): %v", err)
	} else {
		ln.Close()
	}
	h := &linkHarness{from: map[string]net.IP{}}
	byIP := map[string]string{}
	for name, ip := range map[string]string{
		"c1": "127.0.0.11", "c2": "127.0.0.12", "c3": "127.0.0.13",
		"edge-eu-1": "127.0.0.21", "edge-eu-2": "127.0.0.22", "edge-us-1": "127.0.0.23",
	} {
		h.from[name] = net.ParseIP(ip)
		byIP[ip] = name
	}
	origin := func(remote *net.TCPAddr) string { return byIP[remote.IP.String()] }
	h.c = &Cluster{pids: map[string]int{}, sites: map[string]int{}}
	newProxy := func(name string, origin func(*net.TCPAddr) string) *proxy.Proxy {
		p, err := proxy.New(proxy.Options{Name: name, Target: testkit.Echo(t), Origin: origin})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	for i, id := range []string{"c1", "c2", "c3"} {
		h.c.Place(id, i)
		h.c.Members = append(h.c.Members, &Member{Member: &coordproc.Member{ID: id},
			RaftProxy: newProxy("raft-"+id, origin), APIProxy: newProxy("api-"+id, origin)})
	}
	for i, name := range []string{"edge-eu-1", "edge-eu-2", "edge-us-1"} {
		h.c.Place(name, i)
		e := &Edge{Name: name, cluster: h.c}
		for _, m := range h.c.Members {
			e.Proxies = append(e.Proxies, newProxy(name+"->"+m.ID, nil))
		}
		h.edges = append(h.edges, e)
	}
	return h
}

// passes reports whether a new connection from process name through p carries a round trip. A
// proxy refuses by accepting and closing, so a failed dial is the probe's own failure.
func (h *linkHarness) passes(t *testing.T, name string, p *proxy.Proxy) bool {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: h.from[name]}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("dial from %s (%s): %v", name, h.from[name], err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return false
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && got == "ping\n"
}

// TestFaults_AHealLiftsOnlyItsOwnFault: seed 1796221187 --profile 3dc round 11 on the proxies. A
// dc-partition of c2 (with edge-eu-2) came and went inside a leader-partition of c3; when its
// heal lifted every block, c3 led again before anyone else could. The dc-partition here also
// overlaps an edge-partition of edge-us-1. Each fault must hold while the others come and go,
// and its own lift must leave nothing of it behind.
func TestFaults_AHealLiftsOnlyItsOwnFault(t *testing.T) {
	h := newLinkHarness(t)
	in := &injector{r: &Runner{cluster: h.c, edges: h.edges}, busy: map[*Edge]bool{}}
	c1, c2, c3 := h.c.Members[0], h.c.Members[1], h.c.Members[2]
	eu1, eu2, us1 := h.edges[0], h.edges[1], h.edges[2]
	leader := &Event{Round: 11, Kind: LeaderPartition, Target: c3.ID}
	edge := &Event{Round: 11, Kind: EdgePartition, Target: us1.Name, seq: 1}
	dc := &Event{Round: 11, Kind: DCPartition, Target: "datacenter of " + c2.ID, seq: 2}

	type link struct {
		from string
		to   *proxy.Proxy
		what string
	}
	// The leader-partition's and the edge-partition's links, which must stay cut.
	held := []link{
		{c3.ID, c1.RaftProxy, "c3 to c1's Raft"}, {c3.ID, c2.RaftProxy, "c3 to c2's Raft"},
		{c1.ID, c3.RaftProxy, "c1 to c3's Raft"}, {c2.ID, c3.RaftProxy, "c2 to c3's Raft"},
		{us1.Name, c1.APIProxy, "edge-us-1 to c1's advertised API"},
	}
	for i, p := range us1.Proxies {
		held = append(held, link{us1.Name, p, "edge-us-1's own proxy to " + h.c.Members[i].ID})
	}
	// The dc-partition's links.
	cut := []link{
		{c1.ID, c2.RaftProxy, "c1 to c2's Raft"}, {c2.ID, c1.RaftProxy, "c2 to c1's Raft"},
		{eu1.Name, eu1.Proxies[1], "edge-eu-1's own proxy to c2"}, {eu2.Name, eu2.Proxies[0], "edge-eu-2's own proxy to c1"},
		{eu2.Name, c1.APIProxy, "edge-eu-2 to c1's advertised API"},
	}
	expect := func(when string, links []link, pass bool) {
		t.Helper()
		for _, l := range links {
			if h.passes(t, l.from, l.to) != pass {
				t.Errorf("%s: %s passes %v, want %v", when, l.what, !pass, pass)
			}
		}
	}

	h.c.Isolate(leader.block(), c3)
	us1.Partition(edge.block())
	in.cutDC(dc.block(), c2, eu2)
	expect("all three faults on", append(held, cut...), false)
	expect("all three faults on", []link{{eu2.Name, eu2.Proxies[1], "edge-eu-2's own proxy to c2"}, {eu1.Name, c1.APIProxy, "edge-eu-1 to c1's advertised API"}}, true)

	in.lift(dc.block())
	expect("after the dc-partition's heal", held, false)
	expect("after the dc-partition's heal", cut, true)

	h.c.Lift(leader.block())
	us1.Lift(edge.block())
	expect("after every heal", append(held, cut...), true)
}

// TestProtocolWatch_ARaiseWhileAMemberRunsThePreviousBuildIsAViolation: the rolling upgrade's
// watch flags a member that reads a cluster protocol above the previous build's while another
// member has not been started on this build, and not once every member has.
func TestProtocolWatch_ARaiseWhileAMemberRunsThePreviousBuildIsAViolation(t *testing.T) {
	st := func(proto, cluster int) api.StatusResponse {
		return api.StatusResponse{Protocol: proto, ClusterProtocol: cluster}
	}
	w := &protocolWatch{previous: 6, old: map[string]bool{"c1": true, "c2": true, "c3": true}}
	w.upgrading("c2")
	w.observe("c2", st(7, 6))
	w.upgrading("c3")
	w.observe("c1", st(6, 6))
	if v := w.violation(); v != "" {
		t.Fatalf("violation before any raise: %s", v)
	}
	w.observe("c3", st(7, 7))
	if v := w.violation(); !strings.Contains(v, "member c3 reads cluster protocol 7 while c1 still run the previous build (protocol 6)") {
		t.Fatalf("violation %q", v)
	}
	ok := &protocolWatch{previous: 6, old: map[string]bool{"c1": true}}
	ok.upgrading("c1")
	ok.observe("c1", st(7, 7))
	if v := ok.violation(); v != "" || ok.current != 7 {
		t.Fatalf("a raise after every member was upgraded: violation %q, current %d", v, ok.current)
	}
}

// TestCheckProtocols_ThePreviousBuildMustBeOneProtocolBelow: a protocol bump that leaves
// previous.Commit where it was fails the rolling upgrade, naming the protocol to move it to.
func TestCheckProtocols_ThePreviousBuildMustBeOneProtocolBelow(t *testing.T) {
	if err := checkProtocols(6, 7); err != nil {
		t.Fatalf("6 -> 7: %v", err)
	}
	for _, c := range [][2]int{{7, 7}, {6, 8}, {8, 7}} {
		err := checkProtocols(c[0], c[1])
		if want := fmt.Sprintf("must name the last commit at protocol %d", c[1]-1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d -> %d: %v, want an error saying %q", c[0], c[1], err, want)
		}
	}
}
