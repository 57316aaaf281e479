// SPDX-License-Identifier: Apache-2.0

package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxResponseBody bounds what the client reads from one answer (a page of nodes can be large).
const maxResponseBody = 256 << 20

// Client calls the coordinator API on any of its members and finds the leader on its own.
//
// It tries the last known leader first, then every configured member; a member that is down or
// answers without a leader is skipped, and a not-leader answer or redirect naming the leader is
// followed when the leader is one of the configured members (configured): list every member. The number of tries is bounded and every wait honours the context. A request whose
// connection broke mid-way may be sent again to another member: every edge call is safe to repeat
// (register is idempotent, acquire carries a request id that returns the same lease, renew and
// report are checked against the lease token).
type Client struct {
	members  []string
	hc       *http.Client
	token    string
	attempts int
	delay    time.Duration
	observe  CallObserver

	mu     sync.Mutex
	leader string
	// suspect are members whose last attempt got no answer (down, cut off, or silent until the
	// attempt or the call ended): they are asked after the others until they answer again.
	suspect map[string]bool
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client, e.g. one with TLS client certificates; its redirects are handled by Client.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithToken sends the token as a bearer credential on every request.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithAttempts bounds the tries of one call across members and leader hops (default 3 per member + 2).
func WithAttempts(n int) Option { return func(c *Client) { c.attempts = n } }

// WithRetryDelay sets the first pause after every member failed once (default 250ms; it doubles per round up to 8x).
func WithRetryDelay(d time.Duration) Option { return func(c *Client) { c.delay = d } }

// CallKind names an edge call a CallObserver is told of.
type CallKind string

// The edge calls a CallObserver is told of: those the ledger's state depends on.
const (
	CallRegister CallKind = "register"
	CallAcquire  CallKind = "acquire"
	CallRenew    CallKind = "renew"
	CallReport   CallKind = "report"
)

// CallObserver is told of every register, acquire, renew and report the client makes: it is
// called before the call's first attempt with the request as sent (a RegisterRequest,
// AcquireRequest, RenewRequest or ReportRequest, request id filled in), and the function it
// returns once the call returned, with the answer (the matching response) or, on failure, nil
// and the error. Retries within one call are one call. Both run on the caller's goroutine, so
// they are quick and neither keeps nor changes what it is given.
type CallObserver func(kind CallKind, req any) (returned func(resp any, err error))

// WithCallObserver tells o of every edge call, e.g. to record a history for a linearizability check.
func WithCallObserver(o CallObserver) Option { return func(c *Client) { c.observe = o } }

// CallOption configures one call.
type CallOption func(*callOptions)

type callOptions struct {
	attemptTimeout time.Duration
}

// AttemptTimeout bounds each attempt of the call on one member (0, the default: only the call's
// context and the transport bound it). A member that has not answered in time is forgotten as
// leader and the call moves on to the next: a leader lost without a reset (a partition, a power
// loss) holds a request until the transport gives up, far longer than a renewal may wait.
func AttemptTimeout(d time.Duration) CallOption {
	return func(o *callOptions) { o.attemptTimeout = d }
}

// ErrAttemptTimeout is an attempt on one member that outlasted its AttemptTimeout.
var ErrAttemptTimeout = errors.New("member did not answer within the attempt timeout")

// NewClient returns a client for the members' API base URLs (scheme://host:port).
func NewClient(members []string, opts ...Option) (*Client, error) {
	if len(members) == 0 {
		return nil, errors.New("coordinator client: no member addresses")
	}
	c := &Client{delay: 250 * time.Millisecond, suspect: map[string]bool{}}
	for i, m := range members {
		m = strings.TrimRight(strings.TrimSpace(m), "/")
		if err := ValidateBaseURL(fmt.Sprintf("members[%d]", i), m); err != nil {
			return nil, fmt.Errorf("coordinator client: %w", err)
		}
		c.members = append(c.members, m)
	}
	for _, o := range opts {
		o(c)
	}
	if c.attempts <= 0 {
		c.attempts = 3*len(c.members) + 2
	}
	base := c.hc
	if base == nil {
		base = &http.Client{}
	}
	// A copy, so the caller's client keeps its own redirect policy: the leader hop must keep the
	// credential and the method, which net/http's redirect following does not promise across hosts.
	hc := *base
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.hc = &hc
	return c, nil
}

// Leader returns the API address of the leader the client last reached or was told of.
func (c *Client) Leader() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader
}

func (c *Client) setLeader(l string) {
	c.mu.Lock()
	c.leader = l
	c.mu.Unlock()
}

// candidates lists the members to try: the known leader first, suspects last.
func (c *Client) candidates() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.members)+1)
	if c.leader != "" {
		out = append(out, c.leader)
	}
	for _, m := range c.members {
		if m != c.leader && !c.suspect[m] {
			out = append(out, m)
		}
	}
	for _, m := range c.members {
		if m != c.leader && c.suspect[m] {
			out = append(out, m)
		}
	}
	return out
}

// isSuspect reports whether member's last attempt got no answer.
func (c *Client) isSuspect(member string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.suspect[member]
}

// answered clears member's suspicion: it answers again.
func (c *Client) answered(member string) {
	c.mu.Lock()
	delete(c.suspect, member)
	c.mu.Unlock()
}

// unanswered forgets member as the leader, unless another call learnt of a leader since, and
// makes it a suspect.
func (c *Client) unanswered(member string) {
	c.mu.Lock()
	if c.leader == member {
		c.leader = ""
	}
	c.suspect[member] = true
	c.mu.Unlock()
}

// Register records discovered nodes.
func (c *Client) Register(ctx context.Context, req RegisterRequest) (RegisterResponse, error) {
	return observed(c, CallRegister, req, func() (RegisterResponse, error) {
		return call[RegisterResponse](ctx, c, http.MethodPost, PathRegister, nil, &req)
	})
}

// Acquire asks for a lease and blocks on the server up to req.Wait; a nil Lease means none was
// granted. Retries within the call reuse one request id, so they cannot be granted twice; the
// reports it carries must have theirs (the caller sends them again alone under it).
func (c *Client) Acquire(ctx context.Context, req AcquireRequest, opts ...CallOption) (AcquireResponse, error) {
	if req.RequestID == "" {
		req.RequestID = newRequestID()
	}
	return observed(c, CallAcquire, req, func() (AcquireResponse, error) {
		return call[AcquireResponse](ctx, c, http.MethodPost, PathAcquire, nil, &req, opts...)
	})
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Renew extends a lease.
func (c *Client) Renew(ctx context.Context, req RenewRequest, opts ...CallOption) (RenewResponse, error) {
	return observed(c, CallRenew, req, func() (RenewResponse, error) {
		return call[RenewResponse](ctx, c, http.MethodPost, PathRenew, nil, &req, opts...)
	})
}

// Report delivers results for nodes of a lease. Retries within the call reuse one request id, so
// a report applied before its answer was lost is answered again with the same outcomes.
func (c *Client) Report(ctx context.Context, req ReportRequest, opts ...CallOption) (ReportResponse, error) {
	if req.RequestID == "" {
		req.RequestID = newRequestID()
	}
	return observed(c, CallReport, req, func() (ReportResponse, error) {
		return call[ReportResponse](ctx, c, http.MethodPost, PathReport, nil, &req, opts...)
	})
}

// observed runs one edge call and tells the client's observer, if it has one, of its request
// and of how it returned.
func observed[Req, Resp any](c *Client, kind CallKind, req Req, run func() (Resp, error)) (Resp, error) {
	if c.observe == nil {
		return run()
	}
	returned := c.observe(kind, req)
	resp, err := run()
	if returned != nil {
		if err != nil {
			returned(nil, err)
		} else {
			returned(resp, nil)
		}
	}
	return resp, err
}

// Heartbeat tells the leader the edge is alive and learns the pause flag.
func (c *Client) Heartbeat(ctx context.Context, req HeartbeatRequest, opts ...CallOption) (HeartbeatResponse, error) {
	return call[HeartbeatResponse](ctx, c, http.MethodPost, PathHeartbeat, nil, &req, opts...)
}

// Status returns the view of the first member that answers, the known leader first.
func (c *Client) Status(ctx context.Context) (StatusResponse, error) {
	return call[StatusResponse](ctx, c, http.MethodGet, PathStatus, nil, nil)
}

// StatusOf returns one member's own view, without trying any other member.
func (c *Client) StatusOf(ctx context.Context, member string) (StatusResponse, error) {
	var out StatusResponse
	member = strings.TrimRight(member, "/")
	if err := ValidateBaseURL("member", member); err != nil {
		return out, err
	}
	_, err := c.once(ctx, 0, member, http.MethodGet, PathStatus, nil, nil, &out)
	return out, err
}

// FingerprintOf returns one member's ledger fingerprint (status with ?fingerprint=true).
func (c *Client) FingerprintOf(ctx context.Context, member string) (Fingerprint, error) {
	var out StatusResponse
	member = strings.TrimRight(member, "/")
	if err := ValidateBaseURL("member", member); err != nil {
		return Fingerprint{}, err
	}
	if _, err := c.once(ctx, 0, member, http.MethodGet, PathStatus, url.Values{"fingerprint": {"true"}}, nil, &out); err != nil {
		return Fingerprint{}, err
	}
	if out.Ledger == nil {
		return Fingerprint{}, fmt.Errorf("member %s answered no ledger fingerprint (a build before it)", member)
	}
	return *out.Ledger, nil
}

// Nodes returns one page of the ledger's nodes matching f, read on the leader.
func (c *Client) Nodes(ctx context.Context, f NodeFilter) (NodesResponse, error) {
	if err := f.Validate(); err != nil {
		return NodesResponse{}, err
	}
	q := url.Values{}
	if f.Region != "" {
		q.Set("region", f.Region)
	}
	if f.State != "" {
		q.Set("state", string(f.State))
	}
	if f.After != "" {
		q.Set("after", f.After)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	return call[NodesResponse](ctx, c, http.MethodGet, PathNodes, q, nil)
}

// Node returns one node with its history, read on the leader.
func (c *Client) Node(ctx context.Context, identity string) (Node, error) {
	if err := ValidateName("identity", identity); err != nil {
		return Node{}, err
	}
	return call[Node](ctx, c, http.MethodGet, PathNode+url.PathEscape(identity), nil, nil)
}

// Pause sets the replicated pause flag.
func (c *Client) Pause(ctx context.Context, req PauseRequest) (PauseResponse, error) {
	return call[PauseResponse](ctx, c, http.MethodPost, PathPause, nil, &req)
}

// Resume clears the replicated pause flag.
func (c *Client) Resume(ctx context.Context) (PauseResponse, error) {
	return call[PauseResponse](ctx, c, http.MethodPost, PathResume, nil, &struct{}{})
}

// Join adds a member to the cluster.
func (c *Client) Join(ctx context.Context, req JoinRequest) (JoinResponse, error) {
	return call[JoinResponse](ctx, c, http.MethodPost, PathJoin, nil, &req)
}

// Remove removes a member from the cluster.
func (c *Client) Remove(ctx context.Context, req RemoveRequest) error {
	return c.do(ctx, callOptions{}, http.MethodPost, PathRemove, nil, &req, nil)
}

// Snapshot asks the leader to take a Raft snapshot now.
func (c *Client) Snapshot(ctx context.Context) (SnapshotResponse, error) {
	return call[SnapshotResponse](ctx, c, http.MethodPost, PathSnapshot, nil, &struct{}{})
}

// Retry sends abandoned, gone or deferred nodes back to waiting on the leader (with DryRun, says
// which would move). The request is checked before anything is sent; tries within the call reuse one
// request id, so a retry applied before its answer was lost is answered, not refused.
func (c *Client) Retry(ctx context.Context, req RetryRequest) (RetryResponse, error) {
	if err := req.Validate(); err != nil {
		return RetryResponse{}, err
	}
	if req.RequestID == "" && !req.DryRun {
		req.RequestID = newRequestID()
	}
	return call[RetryResponse](ctx, c, http.MethodPost, PathRetry, nil, &req)
}

// Operate applies an operator verb (forget, ban, unban, move) to named nodes on the leader.
func (c *Client) Operate(ctx context.Context, req OperatorRequest) (OperatorResponse, error) {
	if err := req.Validate(); err != nil {
		return OperatorResponse{}, err
	}
	return call[OperatorResponse](ctx, c, http.MethodPost, PathOperator, nil, &req)
}

// Failures returns up to limit of the ledger's recent failures, newest first, read on the leader
// (DefaultFailures when limit is 0, at most MaxFailures).
func (c *Client) Failures(ctx context.Context, limit int) (FailuresResponse, error) {
	if limit < 0 || limit > MaxFailures {
		return FailuresResponse{}, fmt.Errorf("limit: %d is not in 0..%d", limit, MaxFailures)
	}
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return call[FailuresResponse](ctx, c, http.MethodGet, PathFailures, q, nil)
}

// call is do for a call that answers with a T. (A "return out, c.do(..., &out)" would leave it to
// the compiler whether out is read before or after do fills it.)
func call[T any](ctx context.Context, c *Client, method, path string, q url.Values, in any, opts ...CallOption) (T, error) {
	var co callOptions
	for _, o := range opts {
		o(&co)
	}
	var out T
	err := c.do(ctx, co, method, path, q, in, &out)
	return out, err
}

// do sends one call, moving across members and towards the leader within the attempt budget.
func (c *Client) do(ctx context.Context, co callOptions, method, path string, q url.Values, in, out any) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s: %w", path, err)
		}
		body = b
	}
	var lastErr error
	queue := c.candidates()
	delay := c.delay
	for attempt := 0; attempt < c.attempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return joinCtx(err, lastErr)
		}
		if len(queue) == 0 {
			// Every member was tried once (an election, most likely): pause, then go round again,
			// pausing longer each round so a slow election is outlasted within the attempts.
			if err := Sleep(ctx, delay); err != nil {
				return joinCtx(err, lastErr)
			}
			delay = min(2*delay, 8*c.delay)
			queue = c.candidates()
		}
		member := queue[0]
		queue = queue[1:]

		leader, err := c.once(ctx, co.attemptTimeout, member, method, path, q, body, out)
		leader = c.configured(leader)
		var apiErr *Error
		if err == nil || errors.As(err, &apiErr) {
			c.answered(member)
		}
		if err == nil {
			c.noteServed(member, leader, path)
			return nil
		}
		lastErr = err
		switch {
		case errors.As(err, &apiErr) && !retryable(apiErr):
			// A refusal is final wherever it came from: a follower that forwarded it names the
			// leader too, and asking the leader again would only repeat the request.
			return err
		case errors.As(err, &apiErr) && leader != "" && leader != member && c.isSuspect(leader):
			// Followers go on naming a leader lost without a reset until they elect another:
			// suspects come last in the queue already, so the others are asked first.
			c.forget(member)
		case errors.As(err, &apiErr) && leader != "" && leader != member:
			// Not the leader, but it told us who is: go there next.
			c.setLeader(leader)
			queue = append([]string{leader}, without(queue, leader)...)
		case errors.As(err, &apiErr):
			c.forget(member)
		default:
			// Transport failure, no answer within the attempt timeout, or the call's end while
			// the member held it: the member may be down or cut off. Neither the rest of this
			// call nor the next call asks it first.
			c.unanswered(member)
			if ctx.Err() != nil {
				return joinCtx(ctx.Err(), err)
			}
		}
	}
	return fmt.Errorf("%s %s: gave up after %d attempts: %w", method, path, c.attempts, lastErr)
}

// forget drops member as the known leader, unless another call learnt of a leader since.
func (c *Client) forget(member string) {
	c.mu.Lock()
	if c.leader == member {
		c.leader = ""
	}
	c.mu.Unlock()
}

// noteServed remembers the leader after a success: the one the answer names (a follower that
// forwarded names it), else the member itself when it served a leader-only call.
func (c *Client) noteServed(member, leader, path string) {
	switch {
	case leader != "":
		c.setLeader(leader)
	case path != PathStatus: // any member answers status, so it says nothing about leadership
		c.setLeader(member)
	}
}

// once sends the call to one member and returns the leader's address when the answer names one
// (X-Muster-Leader, a not-leader body, or a redirect); with timeout, the member must have
// answered in full within it (ErrAttemptTimeout).
func (c *Client) once(ctx context.Context, timeout time.Duration, member, method, path string, q url.Values, body []byte, out any) (string, error) {
	if timeout <= 0 {
		return c.send(ctx, member, method, path, q, body, out)
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	leader, err := c.send(actx, member, method, path, q, body, out)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		// Not the caller's deadline: say so, without wrapping context.DeadlineExceeded, which
		// callers read as their own call having run out.
		return "", fmt.Errorf("%s %s%s: %w (%s)", method, member, path, ErrAttemptTimeout, timeout)
	}
	return leader, err
}

// send is one request to one member and the reading of its answer.
func (c *Client) send(ctx context.Context, member, method, path string, q url.Values, body []byte, out any) (string, error) {
	u := member + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, u, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return "", fmt.Errorf("%s %s: read answer: %w", method, u, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		leader := resp.Header.Get(HeaderLeader)
		if ValidateBaseURL("leader", leader) != nil {
			leader = ""
		}
		if out == nil || len(bytes.TrimSpace(raw)) == 0 {
			return leader, nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return "", fmt.Errorf("%s %s: decode answer: %w", method, u, err)
		}
		return leader, nil
	}
	e := answerError(resp, raw, member)
	return e.Leader, e
}

// answerError is the Error of a non-2xx answer whose body (at most maxResponseBody) is raw.
func answerError(resp *http.Response, raw []byte, member string) *Error {
	e := &Error{Status: resp.StatusCode, Member: member}
	var eb ErrorBody
	if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
		e.Code, e.Message, e.Leader = eb.Code, eb.Error, eb.Leader
	} else {
		e.Code, e.Message = codeForStatus(resp.StatusCode), strings.TrimSpace(string(truncate(raw, 512)))
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	if e.Leader == "" {
		e.Leader = resp.Header.Get(HeaderLeader)
	}
	if e.Leader == "" && (resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect) {
		if loc, err := resp.Location(); err == nil {
			e.Leader = loc.Scheme + "://" + loc.Host
		}
	}
	if e.Leader != "" && ValidateBaseURL("leader", e.Leader) != nil {
		e.Leader = "" // never follow a malformed address
	}
	return e
}

// retryable reports whether another member (or the same one later) may succeed.
func retryable(e *Error) bool {
	switch e.Code {
	case CodeNotLeader, CodeNoLeader, CodeUnavailable:
		return true
	}
	return e.Status == http.StatusBadGateway || e.Status == http.StatusServiceUnavailable || e.Status == http.StatusGatewayTimeout
}

func codeForStatus(status int) Code {
	switch status {
	case http.StatusBadRequest:
		return CodeBadRequest
	case http.StatusUnauthorized:
		return CodeUnauthorized
	case http.StatusForbidden:
		return CodeForbidden
	case http.StatusNotFound:
		return CodeNotFound
	case http.StatusMethodNotAllowed:
		return CodeMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		return CodeBodyTooLarge
	case http.StatusMisdirectedRequest, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return CodeNotLeader
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return CodeUnavailable
	}
	return CodeInternal
}

func without(list []string, s string) []string {
	out := list[:0:0]
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Sleep waits d or until ctx ends, whose error it returns then.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func joinCtx(ctxErr, last error) error {
	if last == nil {
		return ctxErr
	}
	return fmt.Errorf("%w (last error: %v)", ctxErr, last)
}

// configured returns addr when it is one of the members the client was configured with (same
// scheme, host and port), else "". A member names the leader by its advertised address; the
// client follows only addresses it was given, so a member that is wrong or compromised (or a
// plain-http answer in the middle) cannot send the bearer token elsewhere, nor downgrade https.
func (c *Client) configured(addr string) string {
	addr = strings.TrimRight(addr, "/")
	for _, m := range c.members {
		if strings.EqualFold(m, addr) {
			return m
		}
	}
	return ""
}
