// SPDX-License-Identifier: Apache-2.0

package sim

import "time"

// memberFault replaces a member under load as docs/cluster.md tells an operator to: the leader
// removes a follower from the configuration (the cluster runs on two voters), and a while later
// a new process with an empty data directory joins under the same id: the leader adds it as a
// learner and promotes it once its log caught up.
func memberFault() fault {
	return fault{name: "member-replace", every: 5 * time.Minute, inject: func(s *Sim) {
		l := s.raft.leader
		if !s.settledConfig() || l == nil || !l.ready {
			return
		}
		var followers []*member
		for _, m := range s.members {
			if m != l {
				followers = append(followers, m)
			}
		}
		m := pick(s, followers)
		if !s.remove(l, m) {
			return
		}
		m.startIn(s.between(5*time.Second, 90*time.Second))
	}}
}
