// SPDX-License-Identifier: Apache-2.0

package browsersuite

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seed96588659/muster/pkg/gobuild"
	"github.com/seed96588659/muster/pkg/testkit/aptget"
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
	installed, err := aptget.Ensure(context.Background(), []aptget.Need{{Command: "chromium", Package: "chromium"}})
	if err != nil {
		return "", fmt.Errorf("chromium: %w", err)
	}
	if len(installed) > 0 {
		fmt.Println("browsersuite: chromium was not on PATH; installed Debian's chromium package")
	}
	return exec.LookPath("chromium")
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
