// SPDX-License-Identifier: Apache-2.0

package proxy

import (
	"io"
	"math/rand/v2"
	"time"
)

// Latency is the one-way delay of a link: Base, plus up to Jitter more, drawn for each chunk.
// The zero value forwards at once.
type Latency struct {
	Base, Jitter time.Duration
}

// UniformJitter draws a link's jitter uniformly from [0, max]: the network's, not a seed's, so
// it is not replayed. It serves as Options.Jitter and Dialer.Jitter.
func UniformJitter(max time.Duration) time.Duration { return rand.N(max + 1) }

// delayedChunk is what one read got and when it may be written.
type delayedChunk struct {
	data []byte
	due  time.Time
}

// delayedCopy copies src to dst, holding each chunk it reads until lat after the read, as a link
// of that one-way latency would; a later chunk never overtakes an earlier one (TCP keeps order),
// so jitter only ever adds. jitter draws a duration in [0, lat.Jitter]. It returns when src ends
// and everything read has been written, when a write fails, or at once when ended is closed
// (a partition drops what the link still held).
func delayedCopy(dst io.Writer, src io.Reader, lat Latency, jitter func(time.Duration) time.Duration, ended <-chan struct{}) {
	chunks := make(chan delayedChunk, 256)
	go func() {
		defer close(chunks)
		var last time.Time
		// One read buffer, and each chunk a copy of what a read got: most reads are a message of
		// a few hundred bytes, and a fresh 32 KiB buffer for each was the fleet's garbage.
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				due := time.Now().Add(lat.Base)
				if lat.Jitter > 0 {
					due = due.Add(jitter(lat.Jitter))
				}
				if due.Before(last) {
					due = last
				}
				last = due
				chunks <- delayedChunk{data: append([]byte(nil), buf[:n]...), due: due}
			}
			if err != nil {
				return
			}
		}
	}()
	t := time.NewTimer(0)
	defer t.Stop()
	// Draining lets the reader end (it blocks on a full channel otherwise); its src is closed
	// by the caller once either direction ends.
	drain := func() {
		for range chunks {
		}
	}
	for c := range chunks {
		if wait := time.Until(c.due); wait > 0 {
			t.Reset(wait)
			select {
			case <-t.C:
			case <-ended:
				drain()
				return
			}
		}
		if _, err := dst.Write(c.data); err != nil {
			drain()
			return
		}
	}
}
