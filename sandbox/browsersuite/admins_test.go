// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

const readerToken = "browsersuite-reader-token-0123456789"

// TestStatusPage_ANamedAdminLogsInAndIsToldWhoItIs: a named admin's token (auth.admins) logs in
// as the admin token does, and the page says whom the member took it for, with the role its
// writes are held to.
func TestStatusPage_ANamedAdminLogsInAndIsToldWhoItIs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and a coordinator process")
	}
	procs, err := coordproc.Start(context.Background(), coordproc.Spec{
		Bin: suite.coordinator, Dir: t.TempDir(), Size: 1,
		Auth:          coordproc.Auth{AdminToken: adminToken, EdgeTokens: []string{edgeToken}, Admins: []string{"rita:read=" + readerToken}},
		Lease:         coordproc.Lease{TTL: 30 * time.Second, MaxWait: 5 * time.Second},
		LeaderTimeout: leaderTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, Cluster: procs}
	t.Cleanup(c.stop)
	c.waitLeader(1, "")
	m := c.Members()[0]
	b := newBrowser(t)
	b.do("open the page", 30*time.Second, chromedp.Navigate(m.API+"/status/"), chromedp.WaitVisible(chromedp.CSS("#login")))
	b.do("log in as rita", 20*time.Second,
		chromedp.SendKeys(chromedp.CSS("#token"), readerToken), chromedp.Click(chromedp.CSS("#login-button")),
		chromedp.WaitVisible(chromedp.CSS("#board")))
	b.waitJS("the page to name the admin and its role", `document.querySelector('#caller').textContent === 'signed in as rita (read)'`, 30*time.Second)
	b.screenshot("named-admin")
}
