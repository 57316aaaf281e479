// SPDX-License-Identifier: Apache-2.0

package chaos

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// socketOwner finds which of pids holds the local end of a loopback TCP connection whose
// client side is port: /proc/net/tcp gives the socket's inode, /proc/PID/fd the process. All
// members share 127.0.0.1, so this is how a Raft proxy tells the leader's connections from the
// others'. "" when none of pids holds it (or not on Linux).
func socketOwner(port int, pids map[string]int) string {
	inode := socketInode(port)
	if inode == "" {
		return ""
	}
	want := "socket:[" + inode + "]"
	for name, pid := range pids {
		if pid == 0 {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name())); err == nil && l == want {
				return name
			}
		}
	}
	return ""
}

// socketInode is the inode of the IPv4 TCP socket whose local port is port.
func socketInode(port int) string {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return ""
	}
	defer f.Close()
	suffix := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(fields) < 10 || !strings.HasSuffix(fields[1], suffix) {
			continue
		}
		if fields[9] != "0" {
			return fields[9]
		}
	}
	return ""
}
