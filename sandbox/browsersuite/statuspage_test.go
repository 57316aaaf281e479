// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

// Expressions the page is read with, as a user reads it: what is in the tables.
const (
	// countJS(region, state) is the text of that cell of the per-region table.
	countJS = `((r, s) => { const e = document.querySelector('#regions tr[data-region="' + r + '"] td[data-state="' + s + '"]'); return e ? e.textContent : ''; })`
	// leaderJS is the leader the page names, when its members table marks the same member.
	leaderJS = `(() => {
		const rows = [...document.querySelectorAll('#members tbody tr')];
		const marked = rows.filter((r) => r.dataset.leader === 'true');
		const named = document.querySelector('#leader').textContent;
		return rows.length === 3 && marked.length === 1 && marked[0].dataset.id === named && marked[0].textContent.includes('leader') ? named : '';
	})()`
	// leaseRowJS(id) is the row of a lease in the leases table.
	leaseRowJS = `((id) => [...document.querySelectorAll('#leases tbody tr')].find((r) => r.dataset.lease === id))`
)

// failure carries markup: the page must show it as text, never build elements from it.
const failure = "helper exited 3: /var is full <img src=x onerror=\"window.__injected=1\">"

// TestStatusPage_ShowsTheClusterLiveAndFollowsALeaderChange opens the status page of a follower
// of three real coordinator processes in headless Chromium, logs in with the admin token and
// reads what a user sees: the members and the leader, counts per region and over time, leases
// in flight with their edges, a failure with its error, that node's history, the pause flag
// set through the API, and, after the leader is killed with SIGKILL, the new leader, all
// without a reload.
func TestStatusPage_ShowsTheClusterLiveAndFollowsALeaderChange(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and three coordinator processes")
	}
	c, st := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	edge, admin := c.client(edgeToken), c.client(adminToken)

	register(ctx, t, edge, "ams", 6)
	register(ctx, t, edge, "fra", 4)
	ams := acquire(ctx, t, edge, "edge-ams-1", "ams", 3)
	fra := acquire(ctx, t, edge, "edge-fra-1", "fra", 2)
	failed := fra.Nodes[0]
	rep, err := edge.Report(ctx, api.ReportRequest{LeaseID: fra.ID, Token: fra.Token, Edge: "edge-fra-1", Region: "fra",
		Results: []api.NodeResult{{Identity: failed, Outcome: api.OutcomeFailed, Error: failure}}})
	if err != nil || len(rep.Applied) != 1 {
		t.Fatalf("report the failure of %s: %+v %v", failed, rep, err)
	}

	// The page is opened on a follower: it must work there, and survive the leader's death.
	var page *coordproc.Member
	for _, m := range c.Members() {
		if m.ID != st.LeaderID {
			page = m
			break
		}
	}
	b := newBrowser(t)
	login(b, page)
	if href := b.eval(`location.href`); strings.Contains(href, adminToken) {
		t.Fatalf("the token is in the page's URL %s", href)
	}
	if n := b.eval(`String(localStorage.length)`); n != "0" {
		t.Fatalf("the page wrote %s items to localStorage: the token belongs to the tab's sessionStorage only", n)
	}

	leader := b.waitJS("3 members with the leader named and marked", leaderJS, 30*time.Second)
	pageAgreesWithMember(t, b, admin, page, leader)
	b.waitJS("the counts per region", fmt.Sprintf(`%[1]s('ams','leased') === '3' && %[1]s('ams','waiting') === '3' && %[1]s('ams','total') === '6' &&
		%[1]s('fra','leased') === '1' && %[1]s('fra','waiting') === '3' && %[1]s('fra','total') === '4'`, countJS), 30*time.Second)
	b.waitJS("the counts over time, two samples or more", `(() => {
		const ch = document.querySelector('.chart[data-region="ams"]');
		return ch && Number(ch.dataset.samples) >= 2 && ch.querySelector('polyline.s-leased') !== null;
	})()`, 30*time.Second)
	for _, l := range []*api.Lease{ams, fra} {
		b.waitJS("lease "+l.ID+" in flight with its edge and nodes", fmt.Sprintf(`(() => {
			const r = %s(%s);
			return r && r.dataset.edge === %s && r.querySelector('.edge').textContent === %s && %s.every((n) => r.textContent.includes(n));
		})()`, leaseRowJS, js(l.ID), js(l.Edge), js(l.Edge), jsList(remaining(l, failed))), 30*time.Second)
	}
	b.waitJS("the failure of "+failed+" with its error", fmt.Sprintf(`(() => {
		const r = [...document.querySelectorAll('#failures tbody tr')].find((r) => r.dataset.node === %s);
		const e = r && r.querySelector('.error');
		return e && e.textContent === %s && e.children.length === 0 && r.textContent.includes('fra');
	})()`, js(failed), js(failure)), 30*time.Second)
	b.screenshot("overview")

	// One node's history, after a click on it among the failures.
	b.do("click "+failed, 10*time.Second, chromedp.Click(chromedp.CSS(`#failures button[data-node=`+js(failed)+`]`)))
	b.waitJS("the history of "+failed, fmt.Sprintf(`(() => {
		const h = document.querySelector('#history');
		if (h.hidden || h.dataset.node !== %s) return false;
		const rows = [...h.querySelectorAll('tbody tr')].map((r) => [...r.cells].map((c) => c.textContent));
		// columns: at, from, to, reason, edge, lease, error
		const leased = rows.some((c) => c[1] === 'waiting' && c[2] === 'leased' && c[4] === 'edge-fra-1');
		const failedRow = rows.some((c) => c[1] === 'leased' && c[2] === 'waiting' && c[3] === 'failed' && c[6] === %s);
		return leased && failedRow && document.querySelector('#history-summary').textContent.includes('attempts 1');
	})()`, js(failed), js(failure)), 30*time.Second)
	b.screenshot("history")

	// A node looked up by hand that the ledger does not know is named as such.
	b.do("look up an unknown node", 10*time.Second, chromedp.SendKeys(chromedp.CSS("#find-identity"), "nobody.example.net"),
		chromedp.Click(chromedp.CSS(`#find button[type="submit"]`)))
	b.waitJS("the unknown node refused", `document.querySelector('#history-node').textContent === 'nobody.example.net' &&
		document.querySelector('#history-summary').textContent.startsWith('no such node') && document.querySelector('#history-stale').hidden`, 20*time.Second)
	b.do("back to "+failed, 10*time.Second, chromedp.Click(chromedp.CSS(`#failures button[data-node=`+js(failed)+`]`)))
	b.waitJS("the history of "+failed+" again", fmt.Sprintf(`document.querySelector('#history').dataset.node === %s`, js(failed)), 20*time.Second)

	// Counts follow the ledger live: two more nodes register while the page is open.
	register(ctx, t, edge, "ams", 8)
	b.waitJS("the new nodes counted", fmt.Sprintf(`%[1]s('ams','waiting') === '5' && %[1]s('ams','total') === '8'`, countJS), 30*time.Second)

	// The pause flag, set through the API, shows without a reload.
	if p, err := admin.Pause(ctx, api.PauseRequest{Reason: "change freeze"}); err != nil || !p.Paused {
		t.Fatalf("pause: %+v %v", p, err)
	}
	b.waitJS("the pause flag", `(() => { const p = document.querySelector('#pause'); return p.dataset.paused === 'true' && p.textContent === 'paused: change freeze'; })()`, 30*time.Second)
	b.screenshot("paused")

	// The leader dies; the page names its successor.
	st = c.waitLeader(3, "")
	if st.LeaderID == page.ID {
		// Leadership moved onto the member serving the page since it opened (a loaded machine):
		// the page is opened on a follower again, before the kill.
		t.Logf("leadership moved to %s, which serves the page: opening it on a follower", page.ID)
		for _, m := range c.Members() {
			if m.ID != st.LeaderID {
				page = m
				break
			}
		}
		login(b, page)
	}
	old := st.LeaderID
	b.waitJS("the page to name "+old+" before the kill", fmt.Sprintf(`%s === %s`, leaderJS, js(old)), 30*time.Second)
	polls := b.eval(`document.querySelector('#updated').dataset.polls`)
	c.kill(c.member(old))
	t.Logf("SIGKILL sent to leader %s; the page is on %s", old, page.ID)
	successor := b.waitJS("the page to name a new leader", fmt.Sprintf(`(() => { const l = %s; return l !== '' && l !== %s && l; })()`, leaderJS, js(old)), 60*time.Second)
	pageAgreesWithMember(t, b, admin, page, successor)
	// Every read the follower forwards goes through the new leader again: nothing is left stale.
	b.waitJS("the reads through the new leader", fmt.Sprintf(`%s(%s) !== undefined &&
		['leases-stale', 'failures-stale', 'history-stale', 'problem'].every((id) => document.getElementById(id).hidden) &&
		document.querySelector('#history').dataset.node === %s && document.querySelector('#pause').dataset.paused === 'true'`,
		leaseRowJS, js(ams.ID), js(failed)), 30*time.Second)
	b.screenshot("new-leader")

	if v := b.eval(`String(window.__injected) + ' ' + document.querySelectorAll('img').length`); v != "undefined 0" {
		t.Errorf("the failure's markup became elements of the page (injected, images): %s", v)
	}
	if v := b.eval(`String(window.__opened)`); v != "before" {
		t.Errorf("the page was reloaded: its marker reads %q", v)
	}
	if after := b.eval(`document.querySelector('#updated').dataset.polls`); atoi(after) <= atoi(polls) {
		t.Errorf("the page polled %s times before the kill and %s after", polls, after)
	}
}

// login opens the page of m, is refused a wrong token, then logs in with the admin token and
// marks the window so a reload would show.
func login(b *browser, m *coordproc.Member) {
	b.t.Helper()
	b.do("open the page of "+m.ID, 30*time.Second, chromedp.Navigate(m.API+"/status/"), chromedp.WaitVisible(chromedp.CSS("#login")))
	b.screenshot("login-" + m.ID)
	b.do("log in with a wrong token", 10*time.Second,
		chromedp.SendKeys(chromedp.CSS("#token"), "not-the-admin-token"), chromedp.Click(chromedp.CSS("#login-button")))
	b.waitJS("the wrong token refused", `(() => { const e = document.querySelector('#login-error'); return !e.hidden && e.textContent.includes('does not open the admin API'); })()`, 20*time.Second)
	b.do("log in", 20*time.Second,
		chromedp.SendKeys(chromedp.CSS("#token"), adminToken), chromedp.Click(chromedp.CSS("#login-button")),
		chromedp.WaitVisible(chromedp.CSS("#board")))
	b.eval(`window.__opened = 'before'`)
	b.waitJS("the member serving the page", fmt.Sprintf(`document.querySelector('#member').textContent.startsWith(%s + ' ')`, js(m.ID)), 20*time.Second)
}

// pageAgreesWithMember waits until the leader the page names is the one the member serving it
// reports through the API (either may lag the other by a poll).
func pageAgreesWithMember(t *testing.T, b *browser, admin *api.Client, m *coordproc.Member, named string) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, "the page and "+m.ID+" to name the same leader", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := admin.StatusOf(ctx, m.API)
		if err != nil {
			return false, err.Error()
		}
		if st.LeaderID == named {
			return true, ""
		}
		named = b.eval(leaderJS)
		return false, fmt.Sprintf("page %q, member %q", named, st.LeaderID)
	})
}

// register registers region's nodes 1..n (the first ones again when called twice: harmless).
func register(ctx context.Context, t *testing.T, edge *api.Client, region string, n int) {
	t.Helper()
	var nodes []api.RegisterNode
	for i := 1; i <= n; i++ {
		nodes = append(nodes, api.RegisterNode{Identity: fmt.Sprintf("%s-%02d.example.net", region, i), Version: "0.29.4"})
	}
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: region, Edge: "edge-" + region + "-1", Nodes: nodes}); err != nil {
		t.Fatalf("register %d nodes of %s: %v", n, region, err)
	}
}

func acquire(ctx context.Context, t *testing.T, edge *api.Client, name, region string, n int) *api.Lease {
	t.Helper()
	r, err := edge.Acquire(ctx, api.AcquireRequest{Edge: name, Region: region, MaxNodes: n, Wait: api.Duration(5 * time.Second)})
	if err != nil || r.Lease == nil || len(r.Lease.Nodes) != n {
		t.Fatalf("acquire %d nodes of %s for %s: %+v %v", n, region, name, r, err)
	}
	return r.Lease
}

// remaining lists the nodes the lease still holds once done was reported.
func remaining(l *api.Lease, done string) []string {
	var out []string
	for _, n := range l.Nodes {
		if n != done {
			out = append(out, n)
		}
	}
	return out
}

func jsList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = js(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// visibleJS(id) is whether the element takes room on the page, as a person sees it.
const visibleJS = `((id) => { const e = document.getElementById(id); return !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'; })`

// TestStatusPage_ShowsOnlyTheLoginUntilLoggedInAndEveryColumnFits: before a token is given the
// page shows the login form alone (no board, no "served by ?", no "running", no "log out");
// logged in, in the suite's 1400 px window, the nodes-per-region table shows its last column
// inside its section.
func TestStatusPage_ShowsOnlyTheLoginUntilLoggedInAndEveryColumnFits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and a coordinator process")
	}
	c, _ := startCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	register(ctx, t, c.client(edgeToken), "eu-west-longer-region-name", 3)
	m := c.Members()[0]
	b := newBrowser(t)
	b.do("open the page", 30*time.Second, chromedp.Navigate(m.API+"/status/"), chromedp.WaitVisible(chromedp.CSS("#login")))
	b.screenshot("before-login")
	for _, id := range []string{"board", "summary", "logout", "pause"} {
		if v := b.eval(visibleJS + "(" + js(id) + ")"); v != "false" {
			t.Errorf("#%s is shown before login", id)
		}
	}
	b.do("log in", 20*time.Second,
		chromedp.SendKeys(chromedp.CSS("#token"), adminToken), chromedp.Click(chromedp.CSS("#login-button")),
		chromedp.WaitVisible(chromedp.CSS("#board")))
	b.waitJS("the region's counts", fmt.Sprintf(`%s('eu-west-longer-region-name','total') === '3'`, countJS), 30*time.Second)
	b.screenshot("regions-at-1400px")
	if v := b.eval(`String(window.innerWidth)`); v != "1400" {
		t.Logf("window is %s px wide", v)
	}
	fits := b.eval(`(() => {
		const sec = document.querySelector('#regions').closest('section');
		const cells = document.querySelectorAll('#regions thead th');
		const last = cells[cells.length - 1].getBoundingClientRect();
		const box = sec.getBoundingClientRect();
		return last.right <= box.right - 1 && sec.scrollWidth <= sec.clientWidth ? 'fits' :
			'last column ' + last.left.toFixed(0) + '..' + last.right.toFixed(0) + ' px, section ' + box.left.toFixed(0) + '..' + box.right.toFixed(0) + ' px (scroll width ' + sec.scrollWidth + ', client ' + sec.clientWidth + ')';
	})()`)
	if fits != "fits" {
		t.Errorf("the nodes-per-region table does not fit its section at 1400 px: %s", fits)
	}
}
