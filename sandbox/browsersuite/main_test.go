// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seed96588659/muster/pkg/gobuild"
)

// suite is what TestMain prepares once for every test: the browser and the coordinator binary.
var suite struct {
	chromium    string
	coordinator string
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("browsersuite: -short: the status page tests need Chromium and three coordinator processes; skipped")
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if suite.chromium, err = ensureChromium(); err != nil {
		fmt.Fprintln(os.Stderr, "browsersuite:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "browsersuite-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "browsersuite:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if suite.coordinator, err = buildCoordinator(dir); err != nil {
		fmt.Fprintln(os.Stderr, "browsersuite:", err)
		return 1
	}
	return m.Run()
}

// ensureChromium finds Debian's chromium on PATH, installing the package with apt-get when it is
// missing; without apt-get (or the right to use it) it fails and says what to install.
func ensureChromium() (string, error) {
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return "", errors.New("chromium is not on PATH and apt-get is not available to install it: install Debian's chromium package (apt-get install chromium)")
	}
	var prefix []string
	if os.Geteuid() != 0 {
		sudo, err := exec.LookPath("sudo")
		if err != nil {
			return "", errors.New("chromium is not on PATH, and installing it needs root or sudo: run apt-get install chromium as root")
		}
		prefix = []string{sudo, "-n"}
	}
	fmt.Println("browsersuite: chromium is not on PATH; installing Debian's chromium package")
	for _, args := range [][]string{{apt, "update", "-qq"}, {apt, "install", "-y", "-qq", "chromium"}} {
		args = append(prefix, args...)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("install chromium: %v: %w\n%s", args, err, tail(out, 4000))
		}
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		return "", fmt.Errorf("apt-get installed chromium but it is not on PATH: %w", err)
	}
	return p, nil
}

// buildCoordinator builds muster-coordinator from the coordinator module next to this one.
func buildCoordinator(dir string) (string, error) {
	src, err := filepath.Abs(filepath.Join("..", "..", "coordinator"))
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "muster-coordinator")
	if err := gobuild.Build(context.Background(), src, "-o", bin, "./cmd/muster-coordinator"); err != nil {
		return "", err
	}
	return bin, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
