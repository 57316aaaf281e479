// SPDX-License-Identifier: Apache-2.0

package edge

import "sync"

// knownSet holds the identities that answered this edge's check (or were leased to it), the
// newest limit of them: a node forgotten is checked again at its next sighting, which costs one
// short request. Only identities that answered enter it, so invented ones cannot fill it.
type knownSet struct {
	limit int

	mu    sync.Mutex
	ids   map[string]struct{}
	order []string // insertion order, oldest at head
	head  int
}

func newKnownSet(limit int) *knownSet {
	return &knownSet{limit: limit, ids: make(map[string]struct{})}
}

// has is true for an identity that answered.
func (k *knownSet) has(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.ids[id]
	return ok
}

// add remembers ids, forgetting the oldest beyond the limit.
func (k *knownSet) add(ids ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, id := range ids {
		if _, ok := k.ids[id]; ok {
			continue
		}
		k.ids[id] = struct{}{}
		k.order = append(k.order, id)
		for len(k.ids) > k.limit {
			delete(k.ids, k.order[k.head])
			k.order[k.head] = ""
			k.head++
		}
	}
	// Reclaim the forgotten head once it dominates.
	if k.head > 1024 && k.head*2 > len(k.order) {
		k.order = append([]string(nil), k.order[k.head:]...)
		k.head = 0
	}
}
