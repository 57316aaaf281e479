// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/pkg/gobuild"
	"github.com/seed96588659/muster/pkg/testkit/aptget"
)

// artifact is one package the packager wrote.
type artifact struct {
	name, format, path string
	upstream, full     string // the version without and with the packaging revision
}

// built is what the suite's checks share: the packages and where they came from.
type built struct {
	root string              // the repository
	arts map[string]artifact // "muster-edge.deb" -> artifact
}

func (b built) pkg(t *testing.T, name, format string) artifact {
	t.Helper()
	a, ok := b.arts[name+"."+format]
	if !ok {
		t.Fatalf("no %s package of %s among %v", format, name, b.arts)
	}
	return a
}

// packageNames are the packages make packages builds.
func packageNames() []string { return []string{"muster-coordinator", "muster-edge"} }

// formats are the package formats, as the packager names them.
func formats() []string { return []string{"deb", "rpm"} }

// TestPackages builds both packages as make packages does, then runs every check on them; the
// checks share one build, which takes most of the time.
func TestPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("packagesuite: -short: building and linting the packages takes a minute or more; skipped")
	}
	ensureTools(t)
	b := build(t)
	t.Run("DebLayoutModesAndConffiles", func(t *testing.T) { t.Parallel(); checkDebLayout(t, b) })
	t.Run("RpmLayoutModesAndConfigFlags", func(t *testing.T) { t.Parallel(); checkRpmLayout(t, b) })
	t.Run("RpmScriptsAreTheDebScripts", func(t *testing.T) { t.Parallel(); checkRpmScripts(t, b) })
	t.Run("LintianHasNoErrorAndOnlyExplainedWarnings", func(t *testing.T) { t.Parallel(); checkLintian(t, b) })
	t.Run("RpmlintHasNoErrorAndOnlyExplainedWarnings", func(t *testing.T) { t.Parallel(); checkRpmlint(t, b) })
	t.Run("ExtractedBinariesRunAndCarryTheirVersion", func(t *testing.T) { t.Parallel(); checkBinaries(t, b) })
	t.Run("SystemdAcceptsThePackagedUnits", func(t *testing.T) { t.Parallel(); checkUnits(t, b) })
	t.Run("ScriptsCreateTheUserOnceAndDeleteNothing", func(t *testing.T) { t.Parallel(); checkScripts(t, b) })
}

// ensureTools installs the Debian packages of the commands the checks run, or skips the suite
// when they are missing and cannot be installed.
func ensureTools(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	installed, err := aptget.Ensure(ctx, []aptget.Need{
		{Command: "dpkg-deb", Package: "dpkg"},
		{Command: "lintian", Package: "lintian"},
		{Command: "rpm", Package: "rpm"},
		{Command: "rpm2archive", Package: "rpm2cpio"},
		{Command: "rpmlint", Package: "rpmlint"},
		{Command: "cpio", Package: "cpio"},
		{Command: "systemd-analyze", Package: "systemd"},
		{Command: "man", Package: "man-db"},
	})
	switch {
	case errors.Is(err, aptget.ErrNotPermitted):
		t.Skipf("packagesuite needs lintian, rpmlint, rpm, rpm2cpio, cpio, systemd and man-db: %v", err)
	case err != nil:
		t.Fatalf("install the tools: %v", err)
	case len(installed) > 0:
		t.Logf("installed %s in %s", strings.Join(installed, " "), time.Since(start).Round(time.Second))
	}
}

// makePackages is the packages target's build: the environment and flags it passes to make build.
var makePackages = regexp.MustCompile(`(?m)^\t@\$\(MAKE\) --no-print-directory build ((?:[A-Z_]+=\S+ )*)BUILDFLAGS='\$\(PACKAGE_BUILDFLAGS\)'$`)

// makeFlags is the Makefile's PACKAGE_BUILDFLAGS.
var makeFlags = regexp.MustCompile(`(?m)^PACKAGE_BUILDFLAGS := (.+)$`)

// build compiles both binaries with the Makefile's packages flags and muster-package as make
// build does, then runs muster-package as make packages does. The packager runs as its own
// process: under the test's -race, nfpm's compression would take minutes.
func build(t *testing.T) built {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	b := built{root: filepath.Clean(filepath.Join(wd, "..", "..")), arts: map[string]artifact{}}
	mk, err := os.ReadFile(filepath.Join(b.root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe, flags := makePackages.FindSubmatch(mk), makeFlags.FindSubmatch(mk)
	if recipe == nil || flags == nil {
		t.Fatalf("the Makefile's packages target has no `$(MAKE) build ... BUILDFLAGS='$(PACKAGE_BUILDFLAGS)'` or no PACKAGE_BUILDFLAGS")
	}
	env, args := strings.Fields(string(recipe[1])), strings.Fields(string(flags[1]))
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	builds := []struct {
		module string
		env    []string
		args   []string
	}{
		{"coordinator", env, slices.Concat(args, []string{"-o", bin, "./cmd/muster-coordinator"})},
		{"edge", env, slices.Concat(args, []string{"-o", bin, "./cmd/muster-edge"})},
		{"tools", nil, []string{"-o", bin, "./cmd/muster-package"}},
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, c := range builds {
		wg.Go(func() { errs[i] = gobuild.BuildEnv(ctx, filepath.Join(b.root, c.module), c.env, c.args...) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("built the binaries (%s %s) in %s", strings.Join(env, " "), strings.Join(args, " "), time.Since(start).Round(time.Second))
	start = time.Now()
	pack := []string{"--root", b.root, "--bin", bin, "--out", t.TempDir()}
	out, err := exec.Command(filepath.Join(bin, "muster-package"), pack...).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && strings.Contains(string(exit.Stderr), "carries no version and no commit") {
		// A checkout go does not stamp (a git worktree, an exported tree) needs a version.
		t.Logf("the binaries carry no commit (%s); packaging with --version 0.0.0~test", bytes.TrimSpace(exit.Stderr))
		out, err = exec.Command(filepath.Join(bin, "muster-package"), append(pack, "--version", "0.0.0~test")...).Output()
	}
	if err != nil {
		if errors.As(err, &exit) {
			t.Fatalf("muster-package: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("muster-package: %v", err)
	}
	t.Logf("packaged in %s:\n%s", time.Since(start).Round(time.Second), out)
	for _, path := range strings.Fields(string(out)) {
		a := artifact{path: path, format: strings.TrimPrefix(filepath.Ext(path), ".")}
		switch a.format {
		case "deb":
			a.full = strings.TrimSpace(run(t, "dpkg-deb", "--field", path, "Version"))
			a.name = strings.TrimSpace(run(t, "dpkg-deb", "--field", path, "Package"))
		case "rpm":
			a.full = run(t, "rpm", "-qp", "--qf", "%{VERSION}-%{RELEASE}", path)
			a.name = run(t, "rpm", "-qp", "--qf", "%{NAME}", path)
		}
		a.upstream = a.full[:strings.LastIndex(a.full, "-")]
		b.arts[a.name+"."+a.format] = a
	}
	for _, name := range packageNames() {
		if deb, rpm := b.pkg(t, name, "deb"), b.pkg(t, name, "rpm"); deb.full != rpm.full {
			t.Errorf("%s: the deb is version %s, the rpm %s", name, deb.full, rpm.full)
		}
	}
	if len(b.arts) != 2*len(packageNames()) {
		t.Fatalf("want a deb and an rpm of each of %v, got %v", packageNames(), b.arts)
	}
	return b
}
