// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"context"
	"fmt"

	"golang.org/x/time/rate"
)

// Limit returns r with at most perSecond helper calls started per second (bursts up to one
// second's worth); perSecond 0 or less returns r unlimited. A site helper often calls a CA or an
// inventory service that throttles (puppetserver answers 503 beyond max-queued-requests): waiting
// here costs a node seconds, a refused call costs it an attempt.
func Limit(r Runner, perSecond int) Runner {
	if perSecond <= 0 {
		return r
	}
	return &limited{Runner: r, lim: rate.NewLimiter(rate.Limit(perSecond), perSecond)}
}

type limited struct {
	Runner
	lim *rate.Limiter
}

func (l *limited) Run(ctx context.Context, req *Request) (*Response, error) {
	if err := l.lim.Wait(ctx); err != nil {
		return nil, fmt.Errorf("wait for the helper rate limit (helper_rate): %w", err)
	}
	return l.Runner.Run(ctx, req)
}
