// SPDX-License-Identifier: Apache-2.0

package lease

// fifo is a queue of identities that reclaims its consumed head once it dominates, so a
// long-running edge's queue stays small.
type fifo struct {
	ids  []string
	head int
}

func (q *fifo) push(id string) { q.ids = append(q.ids, id) }

func (q *fifo) len() int { return len(q.ids) - q.head }

// pop takes the oldest identity; "" when empty.
func (q *fifo) pop() string {
	if q.head >= len(q.ids) {
		return ""
	}
	id := q.ids[q.head]
	q.ids[q.head] = ""
	q.head++
	if q.head > 1024 && q.head*2 > len(q.ids) {
		q.ids = append([]string(nil), q.ids[q.head:]...)
		q.head = 0
	}
	return id
}
