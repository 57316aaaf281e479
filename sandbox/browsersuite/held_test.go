// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

// TestStatusPage_ShowsTheHeldQueueAndApprovesFromIt: a coordinator with approval.manual on one
// region holds its first-seen nodes; the page lists them with why and which edge saw them, and
// its admin login approves one with a reason, which the ledger records.
func TestStatusPage_ShowsTheHeldQueueAndApprovesFromIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and a coordinator process")
	}
	procs, err := coordproc.Start(context.Background(), coordproc.Spec{
		Bin: suite.coordinator, Dir: t.TempDir(), Size: 1,
		Auth:  coordproc.Auth{AdminToken: adminToken, EdgeTokens: []string{edgeToken}},
		Lease: coordproc.Lease{TTL: 30 * time.Second, MaxWait: 5 * time.Second},
		Configure: func(mc *coordproc.MemberConfig) error {
			mc.Env = append(mc.Env, "MUSTER_APPROVAL_MANUAL=lab")
			return nil
		},
		LeaderTimeout: leaderTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, Cluster: procs}
	t.Cleanup(c.stop)
	c.waitLeader(1, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	register(ctx, t, c.client(edgeToken), "lab", 2)
	m := c.Members()[0]
	b := newBrowser(t)
	b.do("open the page", 30*time.Second, chromedp.Navigate(m.API+"/status/"), chromedp.WaitVisible(chromedp.CSS("#login")))
	b.do("log in", 20*time.Second,
		chromedp.SendKeys(chromedp.CSS("#token"), adminToken), chromedp.Click(chromedp.CSS("#login-button")),
		chromedp.WaitVisible(chromedp.CSS("#board")))
	b.waitJS("the held queue", `(() => {
		const rows = [...document.querySelectorAll('#held tbody tr[data-node]')];
		return rows.length === 2 && rows.every((r) => r.dataset.reason === 'manual' && r.textContent.includes('edge-lab-1'));
	})()`, 30*time.Second)
	b.waitJS("the held count in the region table", countJS+`('lab','held') === '2'`, 30*time.Second)
	b.screenshot("held-queue")
	b.do("approve one", 20*time.Second,
		chromedp.SendKeys(chromedp.CSS("#held-reason"), "racked by ticket 7"),
		chromedp.Click(chromedp.CSS(`#held button[data-approve="lab-01.example.net"]`)))
	b.waitJS("the queue without it", `(() => {
		const rows = [...document.querySelectorAll('#held tbody tr[data-node]')];
		return rows.length === 1 && rows[0].dataset.node === 'lab-02.example.net' && document.querySelector('#held-result').textContent.includes('approved lab-01.example.net');
	})()`, 30*time.Second)
	n, err := c.client(adminToken).Node(ctx, "lab-01.example.net")
	if err != nil || n.State != api.StateWaiting || !strings.Contains(n.History[len(n.History)-1].Reason, "approved by admin (held: manual): racked by ticket 7") {
		t.Fatalf("lab-01 after the page's approve: %+v %v", n, err)
	}
}
