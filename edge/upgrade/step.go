// SPDX-License-Identifier: Apache-2.0

package upgrade

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/rpmversion"
)

var (
	// ErrNoRepository refuses a node when upgrades_repository is unset and upgrades_optional is off.
	ErrNoRepository = errors.New("upgrades_repository is not configured for the version upgrades feature")
	// ErrNoVersion refuses a node whose inventory carried no version.
	ErrNoVersion = errors.New("did not receive a version in inventory")
	// ErrNotUpgradable refuses a node that did not report upgradable in its inventory.
	ErrNotUpgradable = errors.New("does not support upgrades")
)

// Settings are a site's upgrade settings, under choria-provisioner's configuration keys.
type Settings struct {
	// Enabled is features.version_upgrades; without it no node is upgraded.
	Enabled bool
	// Repository is upgrades_repository, where release_update fetches the target release.
	Repository string
	// Optional is upgrades_optional: a node that cannot be upgraded is configured anyway.
	Optional bool
}

// Inventory is what the node's rpcutil#inventory reply said about its release.
type Inventory struct {
	Version    string
	Upgradable bool
}

// Sender sends choria_provision#release_update for version from repository to the node.
type Sender func(ctx context.Context, repository, version string) error

// NodeSender sends release_update through n, with its token, tries and reply validation.
func NodeSender(n *rpc.Node) Sender {
	return func(ctx context.Context, repository, version string) error {
		_, err := n.ReleaseUpdate(ctx, repository, version)
		return err
	}
}

// Outcome is how the host flow goes on after the upgrade step.
type Outcome int

const (
	// Configure means go on to configure the node: no upgrade was asked for or needed, or it
	// could not happen and upgrades are optional.
	Configure Outcome = iota + 1
	// Sent means release_update was accepted: end the flow now, with no delay, so the node is
	// provisioned again once it comes back on the target version.
	Sent
	// Stop means end the flow with the returned error: the node was refused, its upgrade failed
	// with upgrades not optional, or the call was stopped (paused, lock held, context ended).
	Stop
)

// String names the outcome for logs.
func (o Outcome) String() string {
	switch o {
	case Configure:
		return "configure"
	case Sent:
		return "upgrade sent"
	case Stop:
		return "stop"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Needed applies the seed's refusals in its order, then reports whether the node's version
// differs from target. Any difference counts, a newer node too: the target is what the site runs.
func Needed(s Settings, inv Inventory, target string) (bool, error) {
	if s.Repository == "" && !s.Optional {
		return false, ErrNoRepository
	}
	if inv.Version == "" {
		return false, ErrNoVersion
	}
	if !inv.Upgradable {
		return false, ErrNotUpgradable
	}
	return !rpmversion.NewVersion(inv.Version).Equal(rpmversion.NewVersion(target)), nil
}

// Step runs the upgrade step of one node's host flow; target is the helper's upgrade version.
//
// With upgrades optional, a refusal or a failed release_update is logged as a warning and the
// node is configured as it is. A call that was paused, found the node's lock held or outlived
// its context stops the flow even then: configuring next would only meet the same condition.
// So does one the node acted on or may have (rpc.ErrLeft, rpc.ErrUnanswered): it is replacing
// itself, and the flow settles it instead of configuring a process about to go.
func Step(ctx context.Context, s Settings, inv Inventory, target string, send Sender, log *slog.Logger) (Outcome, error) {
	if !s.Enabled || target == "" {
		return Configure, nil
	}
	if send == nil {
		return Stop, errors.New("upgrade step: no release_update sender")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	need, err := Needed(s, inv, target)
	switch {
	case err != nil:
		err = fmt.Errorf("cannot upgrade to %s: %w", target, err)
	case need:
		log.Warn("will attempt version update", "from", inv.Version, "to", target)
		if err = send(ctx, s.Repository, target); err == nil {
			return Sent, nil
		}
		err = fmt.Errorf("update to %s failed: %w", target, err)
		if errors.Is(err, rpc.ErrPaused) || errors.Is(err, rpc.ErrLocked) || ctx.Err() != nil ||
			errors.Is(err, rpc.ErrLeft) || errors.Is(err, rpc.ErrUnanswered) {
			return Stop, err
		}
	}

	switch {
	case err == nil:
		return Configure, nil
	case s.Optional:
		log.Warn("could not upgrade, continuing", "to", target, "error", err)
		return Configure, nil
	}
	return Stop, err
}
