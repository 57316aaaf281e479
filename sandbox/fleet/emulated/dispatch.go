// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/choria-io/go-choria/lifecycle"
	"github.com/nats-io/nats.go"
)

const nodeSubjectPrefix = "provisioning.node."

// handler decodes each message once and hands it to the nodes it addresses.
func (f *Fleet) handler(nc *nats.Conn) nats.MsgHandler {
	return func(m *nats.Msg) {
		if f.ctx.Err() != nil {
			return
		}
		var target *node
		if id, ok := strings.CutPrefix(m.Subject, nodeSubjectPrefix); ok {
			if target = f.byID[id]; target == nil {
				// Addressed to a node of another fleet or a real node: not ours to decode.
				return
			}
		}
		req, err := decodeRequest(m.Data)
		if err != nil {
			f.invalid.Add(1)
			f.log.Warn("undecodable request", "subject", m.Subject, "error", err)
			return
		}
		f.requests.Add(1)
		now := f.cfg.Now()
		if !ttlValid(req, now) {
			f.invalid.Add(1)
			f.log.Warn("request past its TTL", "request", req.ID, "ttl", req.TTL)
			return
		}
		if req.Collective != collective {
			return
		}
		switch req.Agent {
		case "discovery", "rpcutil", "choria_provision":
		default:
			// A server without the agent discards the request without a reply.
			return
		}
		if f.verifier != nil {
			if err := f.verifier.verify(req); err != nil {
				f.invalid.Add(1)
				f.log.Warn("request failed caller verification", "request", req.ID, "caller", req.Caller, "error", err)
				return
			}
		}
		match := newMatcher(req.Filter, f.log)
		if target != nil {
			f.spawn(func() { f.deliver(nc, target, req, match) })
			return
		}
		f.broadcast(nc, req, match)
	}
}

// broadcast hands a request to every node, split over the configured workers.
func (f *Fleet) broadcast(nc *nats.Conn, req *request, match *matcher) {
	w := min(f.cfg.Workers, len(f.nodes))
	if w == 0 {
		return
	}
	chunk := (len(f.nodes) + w - 1) / w
	for start := 0; start < len(f.nodes); start += chunk {
		part := f.nodes[start:min(start+chunk, len(f.nodes))]
		f.spawn(func() {
			for _, n := range part {
				f.deliver(nc, n, req, match)
			}
		})
	}
}

// ttlValid accepts requests created within their TTL of now, either way, as go-choria servers do.
func ttlValid(req *request, now time.Time) bool {
	ttl := time.Duration(req.TTL) * time.Second
	at := time.Unix(req.Time, 0)
	return at.Before(now.Add(ttl)) && at.After(now.Add(-ttl))
}

// deliver gives the request to a node and its twin, if any.
func (f *Fleet) deliver(nc *nats.Conn, n *node, req *request, match *matcher) {
	for t := n; t != nil; t = t.twin {
		f.deliverOne(nc, t, req, match)
	}
}

func (f *Fleet) deliverOne(nc *nats.Conn, n *node, req *request, match *matcher) {
	action := req.Agent + "#" + req.Action
	n.mu.Lock()
	if n.mode != modeProvisioning || !match.matches(n.identity, n.facts) {
		n.mu.Unlock()
		return
	}
	var ignored string
	switch {
	case n.fault.Silent:
		ignored = "not answered: silent (emulated fault)"
	case n.fault.Ignores(action):
		ignored = "not answered: not among the actions it answers (emulated fault)"
	case n.dropLeft > 0:
		n.dropLeft--
		ignored = fmt.Sprintf("not answered: dropped, %d more to drop (emulated fault)", n.dropLeft)
	}
	delay := n.fault.DelayFor(action)
	n.mu.Unlock()
	if ignored != "" {
		if req.Agent != "discovery" || f.cfg.RecordDiscovery {
			f.record(n, req, false, ignored, f.cfg.Now())
		}
		return
	}
	if delay > 0 {
		f.after(delay, func() { f.answer(nc, n, req, action) })
		return
	}
	f.answer(nc, n, req, action)
}

// pongBody is the discovery agent's answer to "ping".
const pongBody = "pong"

// answer runs the action on the node and publishes its reply.
func (f *Fleet) answer(nc *nats.Conn, n *node, req *request, action string) {
	now := f.cfg.Now()
	n.mu.Lock()
	if n.mode != modeProvisioning {
		// It went away while the reply was delayed.
		n.mu.Unlock()
		return
	}
	var rep *rpcReply
	body := []byte(pongBody)
	if req.Agent != "discovery" {
		rep = newReply(req.Action)
		if left := n.failsLeft[action]; left > 0 {
			n.failsLeft[action] = left - 1
			rep.abort(n.failMessage(action, left))
		} else if req.Agent == "rpcutil" {
			n.rpcutilAction(req, rep, now)
		} else if !n.provisionAction(req, rep, now) {
			n.mu.Unlock()
			f.record(n, req, false, pendingExit, now)
			return
		}
		var err error
		if body, err = json.Marshal(rep); err != nil {
			n.mu.Unlock()
			f.log.Error("encode reply", "node", n.identity, "action", action, "error", err)
			return
		}
	}
	// Recorded before the reply leaves, so whoever sees the reply finds the action in the log.
	if rep != nil {
		errText := ""
		if !rep.ok() {
			errText = rep.Statusmsg
		}
		f.record(n, req, rep.ok(), errText, now)
	} else if f.cfg.RecordDiscovery {
		f.record(n, req, true, "", now)
	}
	err := nc.Publish(req.ReplyTo, encodeReply(req, n.identity, body, now.Unix()))
	if d := n.fault.Disconnect; d != nil && d.After == action && n.disconnects == 0 && (rep == nil || rep.ok()) {
		n.disconnectLocked(d.For)
	}
	n.mu.Unlock()
	if err != nil {
		f.log.Error("publish reply", "node", n.identity, "action", action, "error", err)
		return
	}
	f.replies.Add(1)
}

// failMessage is the status message of a failure injected by a fault.
func (n *node) failMessage(action string, left int) string {
	for _, fl := range n.fault.Fails {
		if fl.Action == action && fl.Message != "" {
			return fl.Message
		}
	}
	total := failTotals(n.fault.Fails)[action]
	return fmt.Sprintf("emulated fault: %s failed (%d of %d)", action, total-left+1, total)
}

// publishEvent announces a lifecycle event (startup, shutdown, provisioned, upgraded) as a
// provisioning-mode server does, in the CloudEvents format go-choria servers use by default.
func (f *Fleet) publishEvent(n *node, typ lifecycle.Type, version string) {
	if f.ctx.Err() != nil || len(f.conns) == 0 {
		return
	}
	kind := typ.String()
	opts := []lifecycle.Option{lifecycle.Identity(n.identity), lifecycle.Component("provision_mode_server")}
	switch typ {
	case lifecycle.Startup:
		opts = append(opts, lifecycle.Version(version))
	case lifecycle.Upgraded:
		opts = append(opts, lifecycle.Version(n.version), lifecycle.NewVersion(version))
	}
	e, err := lifecycle.New(typ, opts...)
	if err != nil {
		f.log.Error("lifecycle event", "node", n.identity, "event", kind, "error", err)
		return
	}
	e.SetFormat(lifecycle.CloudEventV1Format)
	body, err := lifecycle.ToCloudEventV1(e).MarshalJSON()
	if err != nil {
		f.log.Error("lifecycle event", "node", n.identity, "event", kind, "error", err)
		return
	}
	target, err := e.Target()
	if err != nil {
		f.log.Error("lifecycle event", "node", n.identity, "event", kind, "error", err)
		return
	}
	if err := f.conns[n.index%len(f.conns)].Publish(target, body); err != nil {
		f.log.Warn("publish lifecycle event", "node", n.identity, "event", kind, "error", err)
	}
}
