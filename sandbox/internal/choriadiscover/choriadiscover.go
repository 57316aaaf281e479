// SPDX-License-Identifier: Apache-2.0

// Package choriadiscover is the broadcast discovery the sandbox's tests and benchmarks send
// through go-choria's own client, written once so that every caller avoids the race described
// at Broadcast.
package choriadiscover

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/choria-io/go-choria/choria"
	cclient "github.com/choria-io/go-choria/client/client"
	"github.com/choria-io/go-choria/inter"
	"github.com/choria-io/go-choria/protocol"
)

// Broadcast sends the discovery request go-choria's broadcast discoverer sends (ping, agent
// filter choria_provision, collective provisioning) and returns the sorted senders once want of
// them have answered, or whoever answered within limit; took is how long the want-th answer
// took to arrive (0 if fewer answered).
//
// It does not call broadcast.Discover: that always ends on its context's deadline, with three
// receivers of which the late ones hear nothing, and go-choria v0.30.0's
// Connection.QueueSubscribe writes the subscription (connection.go:284) without a lock that the
// receiver's copier goroutine reads when that context ends (:302). Whether -race reports it
// depends on the timer goroutine, i.e. on luck. Here one receiver is subscribed before the
// request goes out and the request ends by the handler's cancel after a reply, or on the
// client's own timeout (after its WaitGroup): both order the write before the read.
func Broadcast(fw *choria.Framework, want int, limit time.Duration) (found []string, took time.Duration, err error) {
	msg, err := fw.NewMessage([]byte(base64.StdEncoding.EncodeToString([]byte("ping"))), "discovery", "provisioning", inter.RequestMessageType, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("discovery message: %w", err)
	}
	if err := msg.SetReplyTo(msg.ReplyTarget()); err != nil {
		return nil, 0, fmt.Errorf("discovery reply target: %w", err)
	}
	f := protocol.NewFilter()
	f.AddAgentFilter("choria_provision")
	msg.SetFilter(f)
	cl, err := cclient.New(fw, cclient.Receivers(1), cclient.Timeout(limit))
	if err != nil {
		return nil, 0, fmt.Errorf("discovery client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	seen := make(map[string]bool, want)
	start := time.Now()
	err = cl.Request(ctx, msg, func(_ context.Context, m inter.ConnectorMessage) {
		tr, err := fw.NewTransportFromJSON(m.Data())
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		seen[tr.SenderID()] = true
		if len(seen) == want && took == 0 {
			took = time.Since(start)
			cancel()
		}
	})
	if err != nil {
		return nil, 0, fmt.Errorf("discover: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Sorted(maps.Keys(seen)), took, nil
}
