// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/api"
	"github.com/seed96588659/muster/pkg/testkit"
)

// TestE2E_RecoverAfterLostQuorum loses two of three members for good, recovers the survivor with
// the recover command and finds it leading alone with the ledger it had.
func TestE2E_RecoverAfterLostQuorum(t *testing.T) {
	c, edge, ctx := startThreeWithNodes(t, "waw", "q", 10)
	survivor := c.procs[0]
	// The registration is acknowledged by a majority; wait until the survivor applied it too.
	testkit.WaitFor(t, 60*time.Second, "the survivor to apply the registration", func() (bool, string) {
		out, err := c.cli("status", "--json", "--addr", survivor.apiURL)
		var st api.StatusResponse
		if err != nil || json.Unmarshal([]byte(out), &st) != nil {
			return false, out
		}
		return st.ID == "c1" && st.Regions["waw"][api.StateWaiting] == 10, out
	})

	// While the survivor runs, recover refuses at once and names its process.
	started := time.Now()
	out, err := c.cli("recover", "--node-id", "c1", "--data-dir", filepath.Join(c.dir, "c1"), "--peers", "c1="+survivor.raft)
	if err == nil {
		t.Fatalf("recover of a running member's directory succeeded: %s", out)
	}
	if took := time.Since(started); took > 10*time.Second {
		t.Errorf("recover took %s to refuse", took)
	}
	for _, want := range []string{"in use", "running", fmt.Sprintf("pid %d", survivor.cmd.Process.Pid)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("recover's refusal %q does not say %q", err, want)
		}
	}

	for _, p := range c.procs[1:] {
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.exited
	}
	if err := survivor.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-survivor.exited

	if out, err := c.cli("recover", "--node-id", "c1", "--data-dir", filepath.Join(c.dir, "c1"), "--peers", "c1=nohost"); err == nil {
		t.Fatalf("recover accepted a peer without a port: %s", out)
	}
	out, err = c.cli("recover", "--node-id", "c1", "--data-dir", filepath.Join(c.dir, "c1"), "--peers", "c1="+survivor.raft)
	if err != nil {
		t.Fatalf("recover: %v: %s", err, out)
	}
	c.procs = c.procs[:1]
	c.relaunch(survivor, true, "")
	c.waitLeader(t, survivor.apiURL, 1, "")

	// A lease only c2 and c3 recorded may still be held: grants wait for TTL, grace and the lock
	// window, and status says until when.
	// A loaded machine may answer the first acquire with a transient error (the new leader not
	// ready yet): only an answer counts, and no answer may carry a lease.
	testkit.WaitFor(t, time.Minute, "an acquire answered after recovery", func() bool {
		got, err := edge.Acquire(ctx, api.AcquireRequest{Edge: "e1", Region: "waw", MaxNodes: 10})
		if err != nil {
			t.Logf("acquire right after recovery: %v (asking again)", err)
			return false
		}
		if got.Lease != nil {
			t.Fatalf("acquire right after recovery: granted %+v, want no lease (grants held)", got.Lease)
		}
		return true
	})
	out, err = c.cli("status", "--addr", survivor.apiURL)
	if err != nil || !strings.Contains(out, "grants held after a recover until") {
		t.Fatalf("status after recovery does not say grants are held (%v):\n%s", err, out)
	}
}
