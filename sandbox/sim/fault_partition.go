// SPDX-License-Identifier: Apache-2.0

package sim

import (
	"fmt"
	"time"
)

// partitionFault cuts links for a while: the leader from the other members (it loses its
// quorum and is deposed), an edge from every member or from the leader only, a member from
// everyone, or the members split with the edges on either side.
func partitionFault() fault {
	return fault{name: "partition", every: 90 * time.Second, inject: func(s *Sim) {
		var pairs [][2]int
		var what string
		members := s.members
		e := pick(s, s.edges)
		switch s.rng.IntN(5) {
		case 0:
			l := s.raft.leader
			if l == nil {
				return
			}
			for _, m := range members {
				if m != l {
					pairs = append(pairs, [2]int{l.id, m.id})
				}
			}
			what = "the leader " + l.name + " from the other members"
		case 1:
			for _, m := range members {
				pairs = append(pairs, [2]int{e.id, m.id})
			}
			what = e.name + " from every member"
		case 2:
			l := s.raft.leader
			if l == nil {
				return
			}
			pairs = append(pairs, [2]int{e.id, l.id})
			what = e.name + " from the leader " + l.name
		case 3:
			m := pick(s, members)
			for i := range len(s.net.cut) - 1 {
				if i != m.id {
					pairs = append(pairs, [2]int{m.id, i})
				}
			}
			what = m.name + " from everyone"
		default:
			m := pick(s, members)
			what = m.name + " apart from the other members, with edges"
			for _, o := range members {
				if o != m {
					pairs = append(pairs, [2]int{m.id, o.id})
				}
			}
			for _, e := range s.edges {
				side := s.chance(0.5)
				what += fmt.Sprintf(" %s:%s", e.name, map[bool]string{true: "with it", false: "with the others"}[side])
				for _, o := range members {
					if (o == m) != side {
						pairs = append(pairs, [2]int{e.id, o.id})
					}
				}
			}
		}
		d := s.between(time.Second, 3*time.Second) + s.expo(s.world.cutFor)
		for _, p := range pairs {
			s.net.setCut(p[0], p[1], true)
		}
		s.tracef(nil, "fault", "partition: %s for %s", what, d)
		s.raft.changed(s)
		s.after(d, func() {
			for _, p := range pairs {
				s.net.setCut(p[0], p[1], false)
			}
			s.tracef(nil, "fault", "partition healed: %s", what)
			s.raft.changed(s)
		})
	}}
}
