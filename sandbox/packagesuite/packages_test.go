// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed96588659/muster/sandbox/internal/aptget"
	"github.com/seed96588659/muster/sandbox/internal/gobuild"
	"github.com/seed96588659/muster/sandbox/packaging"
)

// built is what the suite's checks share: the packages and where they came from.
type built struct {
	root string                        // the repository
	arts map[string]packaging.Artifact // "muster-edge.deb" -> artifact
}

func (b built) pkg(t *testing.T, name, format string) packaging.Artifact {
	t.Helper()
	a, ok := b.arts[name+"."+format]
	if !ok {
		t.Fatalf("no %s package of %s among %v", format, name, b.arts)
	}
	return a
}

// packageNames are the packages make packages builds.
func packageNames() []string { return []string{"muster-coordinator", "muster-edge"} }

// TestPackages builds both packages from binaries built as make packages builds them, then
// runs every check on them; the checks share one build, which takes most of the time.
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
	t.Run("MakefileBuildsAsThePackagerReads", func(t *testing.T) { t.Parallel(); checkMakefile(t, b) })
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

// build compiles both binaries as make packages does and packages them.
func build(t *testing.T) built {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	b := built{root: filepath.Clean(filepath.Join(wd, "..", "..")), arts: map[string]packaging.Artifact{}}
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	names := packageNames()
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		module := strings.TrimPrefix(name, "muster-")
		args := append(packaging.GoBuildFlags(), "-o", filepath.Join(bin, name), "./cmd/"+name)
		wg.Go(func() {
			errs[i] = gobuild.BuildEnv(ctx, filepath.Join(b.root, module), packaging.GoBuildEnv(), args...)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("built the binaries in %s", time.Since(start).Round(time.Second))
	start = time.Now()
	arts, err := packaging.Build(ctx, packaging.Options{Root: b.root, Bin: bin, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		b.arts[a.Name+"."+a.Format] = a
		t.Logf("%s", filepath.Base(a.Path))
	}
	t.Logf("packaged in %s", time.Since(start).Round(time.Second))
	if len(b.arts) != 2*len(names) {
		t.Fatalf("want a deb and an rpm of each of %v, got %v", names, arts)
	}
	return b
}
