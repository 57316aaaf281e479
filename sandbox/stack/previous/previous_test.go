// SPDX-License-Identifier: Apache-2.0

package previous_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/seed96588659/muster/sandbox/stack/previous"
)

// A clone without the commit (CI's shallow checkout) must fail the suites that need the old
// build, saying how to fetch it, not skip them.
func TestBuild_ACloneWithoutTheCommitFailsSayingHowToFetchIt(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=t", "-c", "user.email=t@example.net", "commit", "-q", "--allow-empty", "-m", "only"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	cache := t.TempDir()
	_, err := previous.Build(context.Background(), root, cache)
	if err == nil {
		t.Fatal("Build succeeded in a repository without the previous commit")
	}
	for _, want := range []string{previous.Commit, "not in the git history", "git fetch --unshallow"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}
