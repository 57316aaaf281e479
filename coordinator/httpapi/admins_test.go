// SPDX-License-Identifier: Apache-2.0

package httpapi_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// The named admins of these tests, one per role.
const (
	readerToken   = "token-of-rita-the-reader-0123"
	operatorToken = "token-of-otto-the-operator-01"
	bossToken     = "token-of-bea-the-admin-012345"
)

func namedAdmins() []httpapi.AdminCredential {
	return []httpapi.AdminCredential{
		{Name: "rita", Role: api.RoleRead, Token: readerToken},
		{Name: "otto", Role: api.RoleOperate, Token: operatorToken},
		{Name: "bea", Role: api.RoleAdmin, Token: bossToken},
	}
}

// adminsCluster is cluster with the named admins beside the legacy admin token, and profiles on.
func adminsCluster(t *testing.T, n int) []*member {
	t.Helper()
	return clusterWith(t, n, func(cfg *httpapi.Config) {
		cfg.Admins = namedAdmins()
		cfg.Profiling = true
	})
}

// registered puts identities into region eu as edge-eu, waiting.
func registered(t *testing.T, m *member, ids ...string) {
	t.Helper()
	req := api.RegisterRequest{Region: "eu", Edge: "edge-eu"}
	for _, id := range ids {
		req.Nodes = append(req.Nodes, api.RegisterNode{Identity: id})
	}
	if _, err := edgeClient(t, m.url).Register(ctxT(t), req); err != nil {
		t.Fatal(err)
	}
}

// TestAdmins_EachRoleOpensItsCallsAndARefusalNamesBothRoles: read opens the reads, operate adds
// the writes on nodes and the pause flag, admin everything; a call above the caller's role is 403
// naming the role it needs and the one the caller has, and changes nothing.
func TestAdmins_EachRoleOpensItsCallsAndARefusalNamesBothRoles(t *testing.T) {
	ms := adminsCluster(t, 1)
	registered(t, ms[0], "r1")
	type call struct {
		method, path, body string
		need               api.Role
	}
	calls := []call{
		{http.MethodGet, api.PathStatus + "?fingerprint=true", "", api.RoleRead},
		{http.MethodGet, api.PathNodes, "", api.RoleRead},
		{http.MethodGet, api.PathNode + "r1", "", api.RoleRead},
		{http.MethodGet, api.PathFailures, "", api.RoleRead},
		{http.MethodGet, api.PathEvents + "?follow=false", "", api.RoleRead},
		{http.MethodPost, api.PathRetry, `{"nodes":["r1"],"dry_run":true}`, api.RoleOperate},
		{http.MethodPost, api.PathOperator, `{"verb":"move","nodes":["r1"],"region":"us"}`, api.RoleOperate},
		{http.MethodPost, api.PathPause, `{"reason":"roles"}`, api.RoleOperate},
		{http.MethodPost, api.PathResume, ``, api.RoleOperate},
		{http.MethodPost, api.PathSnapshot, ``, api.RoleAdmin},
		{http.MethodGet, api.PathProfileHeap, "", api.RoleAdmin},
		{http.MethodPost, api.PathRemove, `{"id":"nobody"}`, api.RoleAdmin},
	}
	for _, who := range []struct {
		name  string
		token string
		role  api.Role
	}{{"rita", readerToken, api.RoleRead}, {"otto", operatorToken, api.RoleOperate}, {"bea", bossToken, api.RoleAdmin}, {"admin", adminToken, api.RoleAdmin}} {
		for _, c := range calls {
			status, eb, _ := do(t, c.method, ms[0].url+c.path, who.token, c.body)
			if who.role.Includes(c.need) {
				if status == http.StatusForbidden || status == http.StatusUnauthorized {
					t.Errorf("%s (%s) %s %s: %d %s %q, want it let through", who.name, who.role, c.method, c.path, status, eb.Code, eb.Error)
				}
				continue
			}
			want := "needs role " + string(c.need) + "; " + who.name + " has role " + string(who.role)
			if status != http.StatusForbidden || eb.Code != api.CodeForbidden || !strings.Contains(eb.Error, want) {
				t.Errorf("%s (%s) %s %s: %d %s %q, want 403 forbidden containing %q", who.name, who.role, c.method, c.path, status, eb.Code, eb.Error, want)
			}
		}
	}
	// Status tells each caller who the member took it for, so the status page can offer what
	// the role allows.
	admin, err := api.NewClient([]string{ms[0].url}, api.WithToken(operatorToken))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := admin.Status(ctxT(t)); err != nil || st.Caller == nil || *st.Caller != (api.Caller{Name: "otto", Role: api.RoleOperate}) {
		t.Fatalf("status as otto: caller %+v %v, want otto with role operate", st.Caller, err)
	}
	// The reader's refused move left no trace in the node's history.
	n, err := ms[0].svc.Node(ctxT(t), "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range n.History {
		if strings.Contains(tr.Reason, "rita") {
			t.Fatalf("a reader's refused call left history: %+v", tr)
		}
	}
}

// TestAdmins_MissingWrongAndEdgeTokensKeepTheirAnswers: a missing token and an unknown one stay
// 401 with messages that tell them apart; an edge's token stays 403.
func TestAdmins_MissingWrongAndEdgeTokensKeepTheirAnswers(t *testing.T) {
	ms := adminsCluster(t, 1)
	for _, c := range []struct {
		token  string
		status int
		msg    string
	}{
		{"", http.StatusUnauthorized, "the request carries none"},
		{"token-of-nobody-0123456789", http.StatusUnauthorized, "the bearer token is not an admin token of this member (auth.admin_token, auth.admins)"},
		{edgeToken, http.StatusForbidden, "an edge token does not open the admin API"},
	} {
		status, eb, h := do(t, http.MethodGet, ms[0].url+api.PathNodes, c.token, "")
		if status != c.status || !strings.Contains(eb.Error, c.msg) {
			t.Errorf("nodes with token %q: %d %q, want %d containing %q", c.token, status, eb.Error, c.status, c.msg)
		}
		if status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
			t.Errorf("nodes with token %q: 401 without WWW-Authenticate", c.token)
		}
	}
}

// TestAdmins_TheHistoryAuditAndEventsNameTheAuthenticatedAdmin: whatever "by" a client sends,
// the node's history, the audit and the event stream name the admin its token authenticates,
// on the leader and through a follower's forward; the legacy admin token acts as "admin"; a
// retry names its admin in the history too.
func TestAdmins_TheHistoryAuditAndEventsNameTheAuthenticatedAdmin(t *testing.T) {
	ms := adminsCluster(t, 2)
	registered(t, ms[0], "a1", "a2", "a3")
	ctx := ctxT(t)
	for _, c := range []struct {
		url, token, node, name string
	}{
		{ms[0].url, operatorToken, "a1", "otto"},
		{ms[1].url, bossToken, "a2", "bea"},
		{ms[1].url, adminToken, "a3", "admin"},
	} {
		status, eb, _ := post(t, c.url, api.PathOperator, c.token, `{"verb":"ban","nodes":["`+c.node+`"],"by":"mallory@elsewhere","reason":"audit"}`)
		if status != http.StatusOK {
			t.Fatalf("ban %s as %s: %d %q", c.node, c.name, status, eb.Error)
		}
		n, err := ms[0].svc.Node(ctx, c.node)
		if err != nil {
			t.Fatal(err)
		}
		last := n.History[len(n.History)-1]
		if last.To != api.StateBanned || last.Reason != "ban by "+c.name+": audit" {
			t.Errorf("%s's last history entry %+v, want the ban by %s", c.node, last, c.name)
		}
	}
	audit, err := ms[0].svc.Ledger().Audit(10)
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, e := range audit {
		by = append(by, e.Identity+":"+e.By)
	}
	if got, want := strings.Join(by, " "), "a3:admin a2:bea a1:otto"; got != want {
		t.Errorf("audit %q, want %q", got, want)
	}
	var reasons []string
	err = ms[0].svc.Events(ctx, api.EventPosition{}, api.EventFilter{State: api.StateBanned}, false, func(e api.Event) error {
		reasons = append(reasons, e.Identity+": "+e.Reason)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(reasons, ", "), "a1: ban by otto: audit, a2: ban by bea: audit, a3: ban by admin: audit"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if strings.Contains(strings.Join(reasons, " "), "mallory") {
		t.Errorf("a client's own by reached the events: %q", reasons)
	}

	edge := edgeClient(t, ms[0].url)
	if _, err := edge.Register(ctx, api.RegisterRequest{Region: "gz", Edge: "edge-gz", Nodes: []api.RegisterNode{{Identity: "g1"}}}); err != nil {
		t.Fatal(err)
	}
	acq, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "edge-gz", Region: "gz", MaxNodes: 1})
	if err != nil || acq.Lease == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if _, err := edge.Report(ctx, api.ReportRequest{LeaseID: acq.Lease.ID, Token: acq.Lease.Token, Edge: "edge-gz", Region: "gz", Results: []api.NodeResult{{Identity: "g1", Outcome: api.OutcomeGone, Error: "no answer"}}}); err != nil {
		t.Fatal(err)
	}
	status, eb, _ := post(t, ms[1].url, api.PathRetry, operatorToken, `{"nodes":["g1"],"by":"mallory@elsewhere"}`)
	if status != http.StatusOK {
		t.Fatalf("retry as otto: %d %q", status, eb.Error)
	}
	n, err := ms[0].svc.Node(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if last := n.History[len(n.History)-1]; last.Reason != "retried by the operator (otto)" {
		t.Errorf("g1's last history entry %+v, want the retry by otto", last)
	}
}

// TestAdmins_AReaderOrAnEdgeCannotActNorRecordAnotherName: a reader's token and an edge's are
// refused on every write, whatever "by" they send, and nothing changes; a reader's refusal names
// the role it lacks.
func TestAdmins_AReaderOrAnEdgeCannotActNorRecordAnotherName(t *testing.T) {
	ms := adminsCluster(t, 2)
	registered(t, ms[0], "v1")
	for _, url := range []string{ms[0].url, ms[1].url} {
		for token, want := range map[string]string{readerToken: "needs role operate; rita has role read", edgeToken: "an edge token does not open the admin API"} {
			for _, w := range []struct{ path, body string }{
				{api.PathOperator, `{"verb":"ban","nodes":["v1"],"by":"bea"}`},
				{api.PathRetry, `{"nodes":["v1"],"by":"bea"}`},
				{api.PathPause, `{"reason":"by bea"}`},
			} {
				status, eb, _ := post(t, url, w.path, token, w.body)
				if status != http.StatusForbidden || !strings.Contains(eb.Error, want) {
					t.Errorf("%s with %q on %s: %d %q, want 403 containing %q", w.path, token, url, status, eb.Error, want)
				}
			}
		}
	}
	n, err := ms[0].svc.Node(ctxT(t), "v1")
	if err != nil || n.State != api.StateWaiting || len(n.History) != 1 {
		t.Fatalf("v1 after the refused calls: %+v %v", n, err)
	}
	if st, err := ms[0].svc.Status(ctxT(t)); err != nil || st.Paused {
		t.Fatalf("paused after refused calls: %+v %v", st.Paused, err)
	}
}

// TestAdmins_ACertificateAdminActsUnderItsCommonNameAndRole: NAME:ROLE without a token binds the
// client certificate of that common name: it acts with its role and the audit names it; a reader's
// certificate (auth.readers) is refused a write with the role it lacks; an edge's certificate and
// one named nowhere open nothing; and a named admin's certificate acts as no edge.
func TestAdmins_ACertificateAdminActsUnderItsCommonNameAndRole(t *testing.T) {
	m, ca, srv := tlsMember(t, httpapi.Config{ClientCerts: true, Readers: []string{"statuspage"}, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(),
		Admins: []httpapi.AdminCredential{{Name: "carol", Role: api.RoleOperate}},
		Edges:  []httpapi.EdgeCredential{{Edge: "edge-1", Regions: []string{"ams"}}}})
	ctx := ctxT(t)
	if _, err := m.svc.Register(ctx, api.RegisterRequest{Region: "ams", Edge: "edge-1", Nodes: []api.RegisterNode{{Identity: "c1"}}}); err != nil {
		t.Fatal(err)
	}
	send := func(cn, path, body string) (int, string) {
		t.Helper()
		hc := ca.Client(ca.Issue(t, cn, x509.ExtKeyUsageClientAuth))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	ban := `{"verb":"ban","nodes":["c1"],"by":"bea"}`
	for _, c := range []struct {
		cn     string
		status int
		msg    string
	}{
		{"statuspage", http.StatusForbidden, "needs role operate; statuspage has role read"},
		{"edge-1", http.StatusUnauthorized, "the request carries none"},
		{"stranger", http.StatusUnauthorized, "the request carries none"},
		{"carol", http.StatusOK, ""},
	} {
		if status, b := send(c.cn, api.PathOperator, ban); status != c.status || !strings.Contains(b, c.msg) {
			t.Errorf("ban with %s's certificate: %d %s, want %d containing %q", c.cn, status, b, c.status, c.msg)
		}
	}
	n, err := m.svc.Node(ctx, "c1")
	if err != nil || n.State != api.StateBanned || n.History[len(n.History)-1].Reason != "ban by carol" {
		t.Fatalf("c1 after carol's ban: %+v %v", n, err)
	}
	if status, b := send("carol", api.PathRegister, `{"region":"ams","edge":"edge-1","nodes":[{"identity":"spoofed"}]}`); status != http.StatusForbidden {
		t.Fatalf("register as edge-1 with carol's certificate: %d %s, want 403", status, b)
	}
	if _, err := m.svc.Node(context.Background(), "spoofed"); err == nil {
		t.Fatal("an admin's certificate registered a node as an edge")
	}
}

// TestAdmins_AnAdminsCertificateIsNoEdgeWhereNoEdgeIsBound: with auth.client_certs and no edge
// bound, every certificate of the CA acts as any edge, except a reader's and, as well, a named
// admin's: an admin credential never acts as an edge.
func TestAdmins_AnAdminsCertificateIsNoEdgeWhereNoEdgeIsBound(t *testing.T) {
	m, ca, srv := tlsMember(t, httpapi.Config{ClientCerts: true, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(),
		Admins: []httpapi.AdminCredential{{Name: "carol", Role: api.RoleAdmin}}})
	hc := ca.Client(ca.Issue(t, "carol", x509.ExtKeyUsageClientAuth))
	resp, err := hc.Post(srv.URL+api.PathRegister, "application/json", strings.NewReader(`{"region":"ams","edge":"edge-1","nodes":[{"identity":"spoofed"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "certificate carol is bound to no edge") {
		t.Fatalf("register with carol's certificate: %d %s, want 403 naming the certificate", resp.StatusCode, b)
	}
	if _, err := m.svc.Node(context.Background(), "spoofed"); err == nil {
		t.Fatal("an admin's certificate registered a node as an edge")
	}
}

// TestAdmins_ACertificateAdminOnAFollowerIsSentToTheLeader: a forward would reach the leader with
// the follower's certificate, not the admin's, so a follower sends a certificate admin's write to
// the leader (421 naming it) and answers its read from its own copy, marked stale with why.
func TestAdmins_ACertificateAdminOnAFollowerIsSentToTheLeader(t *testing.T) {
	ms := cluster(t, 2)
	ca := testkit.NewCA(t, "muster test CA")
	h, err := httpapi.New(ms[1].svc, httpapi.Config{EdgeTokens: []string{edgeToken}, AdminTokens: []string{adminToken}, Errors: coordinator.HTTPErrors(),
		Admins: []httpapi.AdminCredential{{Name: "carol", Role: api.RoleOperate}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.Issue(t, "coordinator", x509.ExtKeyUsageServerAuth)},
		ClientCAs:    ca.Pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12,
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	hc := ca.Client(ca.Issue(t, "carol", x509.ExtKeyUsageClientAuth))

	resp, err := hc.Post(srv.URL+api.PathPause, "application/json", strings.NewReader(`{"reason":"carol"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(string(b), ms[0].url) {
		t.Fatalf("pause with carol's certificate on a follower: %d %s, want 421 naming the leader %s", resp.StatusCode, b, ms[0].url)
	}
	resp, err = hc.Get(srv.URL + api.PathNodes)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "client certificate, which a forward to the leader cannot carry") {
		t.Fatalf("nodes with carol's certificate on a follower: %d %s, want 200 from its own copy saying why", resp.StatusCode, b)
	}
}

// TestNew_RefusesBadAdminsNamingTheEntry: an admin without a name or with an unknown role, a name
// or token given twice, and the name of the admin token beside it are refused, naming the entry.
func TestNew_RefusesBadAdminsNamingTheEntry(t *testing.T) {
	svc := &coordinator.Service{}
	for _, c := range []struct {
		admins []httpapi.AdminCredential
		want   string
	}{
		{[]httpapi.AdminCredential{{Role: api.RoleRead, Token: readerToken}}, "admins[0].name: must not be empty"},
		{[]httpapi.AdminCredential{{Name: "rita", Role: "root", Token: readerToken}}, `admins[0] (rita): role "root" is not one of [read operate admin]`},
		{[]httpapi.AdminCredential{{Name: "rita", Role: api.RoleRead, Token: readerToken}, {Name: "rita", Role: api.RoleAdmin, Token: bossToken}}, "admins[1]: the name rita is given twice"},
		{[]httpapi.AdminCredential{{Name: "admin", Role: api.RoleRead, Token: readerToken}}, "admins[0]: the name admin is given twice"},
		{[]httpapi.AdminCredential{{Name: "rita", Role: api.RoleRead, Token: readerToken}, {Name: "otto", Role: api.RoleOperate, Token: readerToken}}, "admins[1] (otto): the token is rita's too"},
		{[]httpapi.AdminCredential{{Name: "otto", Role: api.RoleOperate, Token: adminToken}}, "admins[0] (otto): the token is admin's too"},
	} {
		_, err := httpapi.New(svc, httpapi.Config{EdgeTokens: []string{edgeToken}, AdminTokens: []string{adminToken}, Admins: c.admins, Errors: coordinator.HTTPErrors()})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New with admins %+v: %v, want an error containing %q", c.admins[len(c.admins)-1].Name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), readerToken) || strings.Contains(err.Error(), adminToken)) {
			t.Errorf("the error shows a token: %v", err)
		}
	}
}
