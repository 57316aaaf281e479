// SPDX-License-Identifier: Apache-2.0

package upgrade

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/rpc"
)

// recorder is the release_update side of a test: it keeps what was sent and answers with err.
type recorder struct {
	sent []string // "repository|version"
	err  error
}

func (r *recorder) send(_ context.Context, repository, version string) error {
	r.sent = append(r.sent, repository+"|"+version)
	return r.err
}

func logTo(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

var (
	site     = Settings{Enabled: true, Repository: "https://repo.example.net/choria"}
	upToDate = Inventory{Version: "0.30.0", Upgradable: true}
)

func TestStep_NoFeatureOrNoTargetConfiguresWithoutChecks(t *testing.T) {
	for _, c := range []struct {
		name   string
		s      Settings
		target string
	}{
		{"feature off", Settings{Repository: site.Repository}, "0.31.0"},
		{"no target from the helper", site, ""},
	} {
		var r recorder
		// A node with no version would be refused if the step ran its checks.
		got, err := Step(context.Background(), c.s, Inventory{}, c.target, r.send, nil)
		if got != Configure || err != nil || len(r.sent) != 0 {
			t.Errorf("%s: outcome %v, err %v, sent %v; want configure, nothing sent", c.name, got, err, r.sent)
		}
	}
}

func TestStep_RefusesTheSeedsThreeCases(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Settings
		inv  Inventory
		want error
	}{
		{"repository unset, upgrades not optional", Settings{Enabled: true}, upToDate, ErrNoRepository},
		{"inventory carried no version", site, Inventory{Upgradable: true}, ErrNoVersion},
		{"node did not report upgradable", site, Inventory{Version: "0.29.4"}, ErrNotUpgradable},
		// Refused even though the versions are equal: the checks come before the comparison.
		{"not upgradable on the target already", site, Inventory{Version: "0.31.0"}, ErrNotUpgradable},
	} {
		var r recorder
		got, err := Step(context.Background(), c.s, c.inv, "0.31.0", r.send, nil)
		if got != Stop || !errors.Is(err, c.want) || len(r.sent) != 0 {
			t.Errorf("%s: outcome %v, err %v, sent %v; want stop with %v, nothing sent", c.name, got, err, r.sent, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "0.31.0") {
			t.Errorf("%s: error %q does not name the target", c.name, err)
		}
	}
	if !strings.Contains(ErrNoRepository.Error(), "upgrades_repository") {
		t.Errorf("%q does not name the configuration key", ErrNoRepository)
	}
}

func TestStep_EqualVersionsByRPMOrderConfigureWithoutSending(t *testing.T) {
	for _, c := range []struct{ have, target string }{
		{"0.30.0", "0.30.0"},
		{"0:2.30.0-1.el9", "2.30.0-1.el9"},
		{"1.01", "1.1"},
	} {
		var r recorder
		got, err := Step(context.Background(), site, Inventory{Version: c.have, Upgradable: true}, c.target, r.send, nil)
		if got != Configure || err != nil || len(r.sent) != 0 {
			t.Errorf("%s on target %s: outcome %v, err %v, sent %v; want configure, nothing sent", c.have, c.target, got, err, r.sent)
		}
	}
}

func TestStep_DifferentVersionsSendReleaseUpdateAndEndTheFlow(t *testing.T) {
	for _, c := range []struct{ have, target string }{
		{"0.29.4", "0.30.0"},
		{"1.0~rc1", "1.0"},
		{"2.30.0-1.el9", "1:2.30.0-1.el9"},
		// The seed compares with Equal, not LessThan: a node newer than the target goes to it.
		{"0.31.0", "0.30.0"},
	} {
		var r recorder
		got, err := Step(context.Background(), site, Inventory{Version: c.have, Upgradable: true}, c.target, r.send, nil)
		want := site.Repository + "|" + c.target
		if got != Sent || err != nil || len(r.sent) != 1 || r.sent[0] != want {
			t.Errorf("%s to %s: outcome %v, err %v, sent %v; want sent once with %q", c.have, c.target, got, err, r.sent, want)
		}
	}
}

func TestStep_FailedReleaseUpdateStopsUnlessOptional(t *testing.T) {
	cause := errors.New("invalid response from n1: Update to version 0.30.0 failed, release rolled back: 404 (1)")

	r := recorder{err: cause}
	got, err := Step(context.Background(), site, Inventory{Version: "0.29.4", Upgradable: true}, "0.30.0", r.send, nil)
	if got != Stop || !errors.Is(err, cause) || !strings.Contains(err.Error(), "update to 0.30.0 failed") {
		t.Fatalf("outcome %v, err %v; want stop with the send error", got, err)
	}

	var buf bytes.Buffer
	optional := site
	optional.Optional = true
	r = recorder{err: cause}
	got, err = Step(context.Background(), optional, Inventory{Version: "0.29.4", Upgradable: true}, "0.30.0", r.send, logTo(&buf))
	if got != Configure || err != nil || len(r.sent) != 1 {
		t.Fatalf("optional: outcome %v, err %v, sent %v; want configure after one send", got, err, r.sent)
	}
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "rolled back") {
		t.Errorf("optional: the failure was not logged as a warning: %s", buf.String())
	}
}

func TestStep_OptionalConfiguresARefusedNodeWithAWarning(t *testing.T) {
	optional := Settings{Enabled: true, Repository: site.Repository, Optional: true}
	for _, c := range []struct {
		name string
		inv  Inventory
		want error
	}{
		{"no version", Inventory{Upgradable: true}, ErrNoVersion},
		{"not upgradable", Inventory{Version: "0.29.4"}, ErrNotUpgradable},
	} {
		var buf bytes.Buffer
		var r recorder
		got, err := Step(context.Background(), optional, c.inv, "0.30.0", r.send, logTo(&buf))
		if got != Configure || err != nil || len(r.sent) != 0 {
			t.Errorf("%s: outcome %v, err %v, sent %v; want configure, nothing sent", c.name, got, err, r.sent)
		}
		if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), c.want.Error()) {
			t.Errorf("%s: no warning naming %q: %s", c.name, c.want, buf.String())
		}
	}
}

func TestStep_OptionalWithoutRepositoryIsNotRefused(t *testing.T) {
	// The seed refuses only when the repository is unset AND upgrades are not optional; the
	// release_update that follows is what fails, and being optional the node is configured.
	var r recorder
	r.err = errors.New("no repository")
	got, err := Step(context.Background(), Settings{Enabled: true, Optional: true}, Inventory{Version: "0.29.4", Upgradable: true}, "0.30.0", r.send, nil)
	if got != Configure || err != nil || len(r.sent) != 1 || r.sent[0] != "|0.30.0" {
		t.Fatalf("outcome %v, err %v, sent %v", got, err, r.sent)
	}
}

func TestStep_PausedOrLockedOrCancelledStopsEvenWhenOptional(t *testing.T) {
	optional := Settings{Enabled: true, Repository: site.Repository, Optional: true}
	inv := Inventory{Version: "0.29.4", Upgradable: true}

	locked := fmt.Errorf("choria_provision#release_update failed: %w", &rpc.InvalidResponseError{Sender: "n1", Message: rpc.LockedMessage, Code: 1})
	paused := fmt.Errorf("choria_provision#release_update failed: %w", rpc.ErrPaused)
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"lock held by another worker", locked, rpc.ErrLocked},
		{"paused", paused, rpc.ErrPaused},
	} {
		r := recorder{err: c.err}
		got, err := Step(context.Background(), optional, inv, "0.30.0", r.send, nil)
		if got != Stop || !errors.Is(err, c.want) {
			t.Errorf("%s: outcome %v, err %v; want stop with %v", c.name, got, err, c.want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := recorder{err: context.Canceled}
	if got, err := Step(ctx, optional, inv, "0.30.0", r.send, nil); got != Stop || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: outcome %v, err %v; want stop with context.Canceled", got, err)
	}
}

func TestStep_RefusesAMissingSender(t *testing.T) {
	if got, err := Step(context.Background(), site, upToDate, "0.31.0", nil, nil); got != Stop || err == nil {
		t.Fatalf("outcome %v, err %v; want stop with an error", got, err)
	}
}
