// SPDX-License-Identifier: Apache-2.0

// Package aptget installs the Debian packages a test suite needs when their commands are not on
// PATH (sandbox/browsersuite's chromium, tools/packagesuite's lintian and rpmlint): one apt-get
// update, then one apt-get install of every missing package, as root or through passwordless sudo.
package aptget

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNotPermitted is returned when packages are missing and nothing may install them: the
// caller is not root and has no passwordless sudo, or the machine has no apt-get.
var ErrNotPermitted = errors.New("cannot install Debian packages")

// Need is a command a test runs and the Debian package that provides it.
type Need struct {
	Command string
	Package string
}

// Ensure installs the packages of the needs whose command is not on PATH and returns the
// packages it installed (none when every command was there).
func Ensure(ctx context.Context, needs []Need) ([]string, error) {
	var missing []string
	seen := map[string]bool{}
	for _, n := range needs {
		if _, err := exec.LookPath(n.Command); err == nil || seen[n.Package] {
			continue
		}
		seen[n.Package] = true
		missing = append(missing, n.Package)
	}
	if len(missing) == 0 {
		return nil, nil
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return nil, fmt.Errorf("%w: apt-get is not available; install %s", ErrNotPermitted, strings.Join(missing, " "))
	}
	var prefix []string
	if os.Geteuid() != 0 {
		sudo, err := exec.LookPath("sudo")
		if err != nil || exec.CommandContext(ctx, sudo, "-n", "true").Run() != nil {
			return nil, fmt.Errorf("%w: not root and no passwordless sudo; as root: apt-get install %s", ErrNotPermitted, strings.Join(missing, " "))
		}
		prefix = []string{sudo, "-n"}
	}
	for _, args := range [][]string{{apt, "update", "-qq"}, append([]string{apt, "install", "-y", "-qq", "--no-install-recommends"}, missing...)} {
		args = append(append([]string{}, prefix...), args...)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, tail(out, 4000))
		}
	}
	for _, n := range needs {
		if _, err := exec.LookPath(n.Command); err != nil {
			return nil, fmt.Errorf("installed %s but %s is not on PATH: %w", strings.Join(missing, " "), n.Command, err)
		}
	}
	return missing, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
