// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// ParentEnv names the lab process a node must die with; the lab sets it when it starts a node.
const ParentEnv = "MUSTER_NODE_PARENT"

// prPDeathSig is prctl's PR_SET_PDEATHSIG.
const prPDeathSig = 1

// dieWithParent asks the kernel again, in this process image, to kill the node when its lab
// dies: the lab sets Pdeathsig when it starts the node, yet nodes were seen outliving a
// SIGKILLed `muster-sandbox run` once go-choria had re-executed them. A lab already gone before
// this ran is caught by the parent check.
func dieWithParent() error {
	want, err := strconv.Atoi(os.Getenv(ParentEnv))
	if err != nil {
		return nil // not started by a lab
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prPDeathSig, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return fmt.Errorf("node: parent-death signal: %w", errno)
	}
	if os.Getppid() != want {
		return fmt.Errorf("node: its lab (pid %d) is gone", want)
	}
	return nil
}
