// SPDX-License-Identifier: Apache-2.0

package demo

import (
	"os"
	"strings"
	"time"

	"github.com/seed96588659/muster/sandbox/stack/coordproc"
)

// coordinatorLease is the demo's lease settings: a failed node is offered again after a second
// (doubling up to four) and abandoned after five attempts, and a provisioned node seen again in
// provisioning mode is queued after two seconds (the flapping node), so the faulty nodes settle
// in seconds rather than minutes; everything else keeps the coordinator's defaults.
var coordinatorLease = coordproc.Lease{
	RetryBackoff:     time.Second,
	RetryBackoffMax:  4 * time.Second,
	MaxAttempts:      5,
	ReprovisionAfter: 2 * time.Second,
}

// coordinatorApproval is the demo's approval policy: a node back in provisioning mode
// flappingCount times within an hour is held (docs/approvals.md).
var coordinatorApproval = []string{"MUSTER_APPROVAL_FLAPPING=" + flappingPolicy}

// memberStartTimeout bounds one member's start until its API answers /healthz.
const memberStartTimeout = 30 * time.Second

// coordinatorSpec is the run's n members of bin, with data and logs below dir and the run's
// tokens. Each runs in its own process group that dies with this process: the terminal's Ctrl-C
// reaches the run alone, which stops the members after the edges, and a killed run leaves none.
func coordinatorSpec(bin, dir string, sec secrets, n int, stopGrace time.Duration) coordproc.Spec {
	return coordproc.Spec{
		Bin: bin, Dir: dir, Size: n,
		Auth:          coordproc.Auth{AdminToken: sec.admin, Edges: sec.authEdges()},
		Lease:         coordinatorLease,
		ProcessGroup:  true,
		StartTimeout:  memberStartTimeout,
		LeaderTimeout: clusterReadyTimeout,
		StopGrace:     stopGrace,
		Configure: func(m *coordproc.MemberConfig) error {
			m.Env = append(m.Env, coordinatorApproval...)
			return nil
		},
	}
}

// logTail is the last lines of a log file, for errors.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}
