// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"context"
	"crypto/fips140"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/choria-io/go-choria/backoff"
	"github.com/choria-io/go-choria/inter"
	"github.com/choria-io/go-choria/protocol"
	rpcclient "github.com/choria-io/go-choria/providers/agent/mcorpc/client"
	"github.com/nats-io/nats.go"
)

// Conn is a Transport that keeps one broker connection for the life of the edge and multiplexes
// every request over it: one subscription on the caller's reply subjects, replies routed by
// request id. go-choria's generated clients open fresh TLS connections for every call, which
// costs 13-20 ms of CPU per RPC; its own Connection option cannot be shared by concurrent
// requests because every request subscribes under the same name.
//
// Every request is fenced by the pause source it carries (Request.Pause): checked immediately
// before it is encoded and again before it is published, dated so that a node accepts it (its
// creation time plus its Choria TTL) no longer than the lease it was checked under has left,
// and never kept for a reconnect (a publish while the broker connection is down fails).
type Conn struct {
	fw         inter.Framework
	nc         *nats.Conn
	sub        *nats.Subscription
	collective string
	replyBase  string
	timeout    time.Duration // zero: the action's default from timeouts
	timeouts   Timeouts
	grace      time.Duration
	signing    Signing
	v1         *v1Encoder // nil: go-choria builds the messages (protocol v2 frameworks)
	now        func() time.Time
	ttl        int // the framework's request TTL, in seconds: the longest a request may carry

	mu      sync.Mutex
	pending map[string]*waiter
	closed  bool
}

// waiter is where route hands the replies to one request: its channel during the reply window,
// then, for a request its caller watches (Request.Watch), a count in the caller's Responders.
type waiter struct {
	ch   chan []byte
	late func()
}

// ConnOptions tune a Conn.
type ConnOptions struct {
	// Name is the broker connection name; it defaults to the framework's caller id.
	Name string
	// Timeout, when set, bounds every request that carries no Timeout of its own; when zero each
	// action gets its own default from the DDLs (see Timeouts), as go-choria's client does.
	Timeout time.Duration
	// Signing chooses which requests are signed with the caller's RSA key; the zero value is
	// SignAuto. It applies to protocol v1, which Conn encodes itself.
	Signing Signing
	// DuplicateGrace is how long to keep listening after the first reply so that a second machine
	// answering to the same identity is seen; default 20ms.
	DuplicateGrace time.Duration
	// Now is the clock requests are checked and stamped by; default time.Now. Its readings are
	// compared with the deadlines of DeadlineSource, so they must carry the same monotonic clock.
	Now func() time.Time
}

// Dial connects to the framework's middleware servers in its main collective.
func Dial(ctx context.Context, fw inter.Framework, o ConnOptions) (*Conn, error) {
	timeouts, err := NewTimeouts(time.Duration(fw.Configuration().DiscoveryTimeout) * time.Second)
	if err != nil {
		return nil, err
	}
	if o.DuplicateGrace <= 0 {
		o.DuplicateGrace = 20 * time.Millisecond
	}
	if o.Name == "" {
		o.Name = fw.CallerID()
	}
	if o.Now == nil {
		o.Now = time.Now
	}

	nc, err := dialUnbuffered(ctx, fw, o.Name)
	if err != nil {
		return nil, err
	}

	cfg := fw.Configuration()
	collective := cfg.MainCollective
	var enc *v1Encoder
	if fw.RequestProtocol() == protocol.RequestV1 {
		enc = &v1Encoder{senderID: cfg.Identity, callerID: fw.CallerID(), collective: collective}
		if o.Signing != SignNever {
			src, ok := fw.(tlsCertificateSource)
			if !ok {
				nc.Close()
				return nil, fmt.Errorf("dial as %s: request signing needs the framework's client certificate", o.Name)
			}
			if enc.signer, err = newRequestSigner(src); err != nil {
				nc.Close()
				return nil, fmt.Errorf("dial as %s: %w", o.Name, err)
			}
		}
	}
	c := &Conn{
		fw:         fw,
		nc:         nc,
		collective: collective,
		replyBase:  replyPrefix(collective, fw.CallerID()),
		timeout:    o.Timeout,
		timeouts:   timeouts,
		signing:    o.Signing,
		v1:         enc,
		grace:      o.DuplicateGrace,
		now:        o.Now,
		ttl:        cfg.TTL,
		pending:    make(map[string]*waiter),
	}

	c.sub, err = nc.Subscribe(c.replyBase+"*", c.route)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("subscribe to replies on %s*: %w", c.replyBase, err)
	}
	if err := nc.Flush(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("subscribe to replies on %s*: %w", c.replyBase, err)
	}

	return c, nil
}

// dialUnbuffered connects as go-choria's connector does (servers, TLS, credentials), except
// that nothing published while the connection is down is kept for the reconnect: NATS would
// send it then, when the lease the request was checked under may have ended. go-choria's
// connector fixes a 10 KB reconnect buffer and has no option for it, so the options of one of
// its connections are taken and that connection closed.
func dialUnbuffered(ctx context.Context, fw inter.Framework, name string) (*nats.Conn, error) {
	log := fw.Logger("muster-rpc")
	connector, err := fw.NewConnector(ctx, fw.MiddlewareServers, name, log)
	if err != nil {
		return nil, fmt.Errorf("connect to broker as %s: %w", name, err)
	}
	opts := connector.ConnectionOptions()
	connector.Close()

	// A publish while disconnected then fails at once with nats.ErrReconnectBufExceeded.
	opts.ReconnectBufSize = -1
	// The copied handlers belong to go-choria's connection; its closed handler writes a
	// variable of the call that made it.
	opts.ClosedCB, opts.ConnectedCB = nil, nil
	opts.DisconnectedErrCB = func(_ *nats.Conn, err error) {
		if err != nil {
			log.Warnf("broker connection lost (%v): requests fail until it is back", err)
		}
	}
	opts.ReconnectedCB = func(nc *nats.Conn) { log.Warnf("broker connection back at %s", nc.ConnectedUrlRedacted()) }
	opts.AsyncErrorCB = func(_ *nats.Conn, _ *nats.Subscription, err error) { log.Errorf("broker connection: %v", err) }

	var nc *nats.Conn
	err = backoff.Default.For(ctx, func(try int) error {
		if nc, err = opts.Connect(); err != nil {
			log.Warnf("connect to broker as %s (try %d): %v", name, try, err)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("connect to broker as %s: %w", name, err)
	}
	return nc, nil
}

// replyPrefix is the private reply subject of caller as go-choria's ReplyTarget builds it, so
// the broker's grants to ordinary clients cover it: in FIPS 140 mode the broker grants only the
// sha256 of the caller id (an md5 subscription is refused and every call would time out), else
// md5, which every broker version grants.
func replyPrefix(collective, caller string) string {
	if fips140.Enabled() {
		sum := sha256.Sum256([]byte(caller))
		return collective + ".reply." + hex.EncodeToString(sum[:]) + "."
	}
	sum := md5.Sum([]byte(caller))
	return collective + ".reply." + hex.EncodeToString(sum[:]) + "."
}

// route runs on the NATS delivery goroutine: hand the bytes over, never block, decode elsewhere.
func (c *Conn) route(m *nats.Msg) {
	id := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	c.mu.Lock()
	w := c.pending[id]
	if w != nil && w.ch != nil {
		// Sent under the lock, so follow's drain after its swap misses none.
		select {
		case w.ch <- m.Data:
		default:
		}
	}
	c.mu.Unlock()
	if w != nil && w.late != nil {
		w.late()
	}
	// Else a late reply to a finished request nobody watches: dropped.
}

// Request implements Transport.
func (c *Conn) Request(ctx context.Context, req Request) ([]Reply, error) {
	out, ch, done, err := c.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	followed := false
	defer func() {
		if !followed {
			done()
		}
	}()
	if err := out.publish(); err != nil {
		if errors.Is(err, nats.ErrReconnectBufExceeded) {
			return nil, fmt.Errorf("publish %s to %s: not sent, the broker connection is down: %w", req.Label(), req.Identity, err)
		}
		return nil, fmt.Errorf("publish %s to %s: %w", req.Label(), req.Identity, err)
	}

	deadline := time.NewTimer(c.timeoutOf(req))
	defer deadline.Stop()

	var raw [][]byte
	var grace <-chan time.Time
wait:
	for {
		select {
		case data := <-ch:
			raw = append(raw, data)
			if grace == nil {
				t := time.NewTimer(c.grace)
				defer t.Stop()
				grace = t.C
			}
		case <-grace:
			break wait
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if req.Watch != nil {
		followed = c.follow(req.Watch, out.id, req.Action, ch, len(raw), done)
	}

	replies := make([]Reply, 0, len(raw))
	for _, data := range raw {
		r, err := out.decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s from %s: %w", req.Label(), req.Identity, err)
		}
		replies = append(replies, r)
	}
	return replies, nil
}

// rebuilds is how many times a request voided by a stall between its check and its publish is
// checked and built again before the call ends as a pause.
const rebuilds = 3

// prepare checks, dates and encodes req and registers its reply channel (done forgets it), then
// checks again immediately before the publish. A stall in between (fence.recheck) voids what was built: it
// is never sent. While the lease still covers a request, a fresh check dates and builds it again,
// so a loaded machine's scheduling delay costs no attempt; a process stopped past its lease is
// refused by that fresh check.
func (c *Conn) prepare(ctx context.Context, req Request) (outgoing, chan []byte, func(), error) {
	for try := 1; ; try++ {
		f, err := check(req, c.now(), c.ttl, c.v1 != nil)
		if err != nil {
			return outgoing{}, nil, nil, err
		}
		out, err := c.encode(ctx, req, f.ttl, f.created)
		if err != nil {
			return outgoing{}, nil, nil, err
		}
		replies, done, err := c.await(out.id)
		if err != nil {
			return outgoing{}, nil, nil, err
		}
		err = f.recheck(req, c.now())
		if err == nil {
			return out, replies, done, nil
		}
		done()
		if !errors.Is(err, errStalled) || try == rebuilds {
			return outgoing{}, nil, nil, err
		}
	}
}

// await registers the channel the replies to request id are routed to; done forgets it.
func (c *Conn) await(id string) (replies chan []byte, done func(), err error) {
	// Buffered beyond one so duplicate answers are counted, not dropped.
	ch := make(chan []byte, 8)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, errors.New("rpc connection is closed")
	}
	c.pending[id] = &waiter{ch: ch}
	return ch, func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}, nil
}

// follow hands request id over to w once its reply window, which saw n replies, has ended:
// replies still in ch and every later one are counted by w until it is closed, which forgets
// the request (done). False when w was closed already: the caller forgets it.
func (c *Conn) follow(w *Responders, id, action string, ch chan []byte, n int, done func()) bool {
	late, ok := w.follow(id, action, n, done)
	if !ok {
		return false
	}
	c.mu.Lock()
	if c.pending[id] != nil { // else w was closed meanwhile and forgot it
		c.pending[id] = &waiter{late: late}
	}
	c.mu.Unlock()
	for {
		select {
		case <-ch:
			late()
		default:
			return true
		}
	}
}

// timeoutOf is the reply window of req: its own Timeout, else the Conn's, else the action's.
func (c *Conn) timeoutOf(req Request) time.Duration {
	switch {
	case req.Timeout > 0:
		return req.Timeout
	case c.timeout > 0:
		return c.timeout
	}
	return c.timeouts.For(req.Agent, req.Action)
}

// outgoing is one encoded request: how to publish it and how to decode its replies.
type outgoing struct {
	id      string
	publish func() error
	decode  func([]byte) (Reply, error)
}

// encode builds req, valid for ttl seconds from created, in protocol v1 itself, or through
// go-choria for other protocols (which dates the request itself).
func (c *Conn) encode(ctx context.Context, req Request, ttl int, created time.Time) (outgoing, error) {
	if c.v1 == nil {
		msg, err := c.message(req, ttl)
		if err != nil {
			return outgoing{}, err
		}
		t, err := msg.Transport(ctx)
		if err != nil {
			return outgoing{}, fmt.Errorf("%s to %s: encode request: %w", req.Label(), req.Identity, err)
		}
		data, err := t.JSON()
		if err != nil {
			return outgoing{}, fmt.Errorf("%s to %s: encode request: %w", req.Label(), req.Identity, err)
		}
		// The node's own subject, as go-choria's connector publishes a direct request outside a
		// federation.
		subject := nodeSubject(c.collective, req.Identity)
		return outgoing{id: msg.RequestID(), publish: func() error { return c.nc.Publish(subject, data) }, decode: c.decode}, nil
	}
	id, err := newRequestID()
	if err != nil {
		return outgoing{}, fmt.Errorf("%s to %s: %w", req.Label(), req.Identity, err)
	}
	m, err := c.v1.encode(id, req, c.replyBase+id, c.signing.signs(req.Unsigned), created, ttl)
	if err != nil {
		return outgoing{}, err
	}
	// No Flush as go-choria does after each direct request: the NATS client's flusher sends
	// the buffer at once, and a flush would add a round trip to the broker to every call.
	return outgoing{
		id:      id,
		publish: func() error { return c.nc.Publish(m.subject, m.data) },
		decode:  func(data []byte) (Reply, error) { return decodeV1Reply(data, id) },
	}, nil
}

func (c *Conn) message(req Request, ttl int) (inter.Message, error) {
	body, err := json.Marshal(rpcclient.RPCRequest{Agent: req.Agent, Action: req.Action, Data: req.Data})
	if err != nil {
		return nil, fmt.Errorf("%s to %s: encode request: %w", req.Label(), req.Identity, err)
	}
	msg, err := c.fw.NewMessage(body, req.Agent, c.collective, inter.RequestMessageType, nil)
	if err != nil {
		return nil, fmt.Errorf("%s to %s: new message: %w", req.Label(), req.Identity, err)
	}
	filter := protocol.NewFilter()
	filter.AddAgentFilter(req.Agent)
	msg.SetFilter(filter)
	msg.SetDiscoveredHosts([]string{req.Identity})
	// A direct request is published to the node's own subject only; go-choria accepts the type
	// once the target is known.
	if err := msg.SetType(inter.DirectRequestMessageType); err != nil {
		return nil, fmt.Errorf("%s to %s: %w", req.Label(), req.Identity, err)
	}
	msg.SetProtocolVersion(c.fw.RequestProtocol())
	msg.SetTTL(ttl)
	if err := msg.SetReplyTo(c.replyBase + msg.RequestID()); err != nil {
		return nil, fmt.Errorf("%s to %s: reply target: %w", req.Label(), req.Identity, err)
	}
	return msg, nil
}

func (c *Conn) decode(data []byte) (Reply, error) {
	reply, err := c.fw.NewReplyFromTransportJSON(data, false)
	if err != nil {
		return Reply{}, fmt.Errorf("decode reply: %w", err)
	}
	r, err := rpcclient.ParseReply(reply)
	if err != nil {
		return Reply{}, fmt.Errorf("decode reply from %s: %w", reply.SenderID(), err)
	}
	return replyFrom(r), nil
}

// Close unsubscribes and closes the broker connection; requests in flight end at their timeout.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()

	err := c.sub.Unsubscribe()
	c.nc.Close()
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("close rpc connection: %w", err)
	}
	return nil
}
