// SPDX-License-Identifier: Apache-2.0

package hostflow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/edge/keys"
	"github.com/seed96588659/muster/edge/upgrade"
	"github.com/seed96588659/muster/pkg/rpc"
)

// The steps before the helper: each fills in what the helper and later steps read.

func (f *Flow) fetchJWT(ctx context.Context, r *run) error {
	if f.s.Signing != nil && f.s.Signing.Guess() {
		r.node.TryUnsigned()
	}
	jwt, err := r.node.JWT(ctx)
	if err != nil {
		return fmt.Errorf("could not fetch and validate JWT: %s: %w", r.req.Identity, err)
	}
	claims, err := f.d.Verifier.Validate(jwt.JWT)
	if err != nil {
		return fmt.Errorf("could not validate JWT: %s: %w", r.req.Identity, err)
	}
	r.jwt = jwt
	r.req.JWT = claims
	if f.s.Signing != nil {
		r.node.SetSigning(f.s.Signing.Learn(claims))
	}
	return nil
}

func (f *Flow) fetchED25519(ctx context.Context, r *run) error {
	key, err := r.node.Gen25519(ctx)
	if err != nil {
		return fmt.Errorf("could not fetch ed25519 public key: %w", err)
	}
	r.req.ED25519PubKey = key
	return nil
}

func (f *Flow) fetchInventory(ctx context.Context, r *run) error {
	inv, err := r.node.Inventory(ctx)
	if err != nil {
		return fmt.Errorf("could not provision %s: %w", r.req.Identity, err)
	}
	r.req.Inventory = string(inv.Raw)
	r.version = inv.Version
	r.inv = upgrade.Inventory{Version: inv.Version, Upgradable: inv.Upgradable}
	return nil
}

func (f *Flow) fetchCSR(ctx context.Context, r *run) error {
	csr, err := r.node.Gencsr(ctx, r.req.Identity)
	if err != nil {
		return fmt.Errorf("could not provision %s: %w", r.req.Identity, err)
	}
	if _, err := f.d.CSR.ValidateCSR(r.req.Identity, csr.CSR); err != nil {
		return fmt.Errorf("could not provision %s: %w", r.req.Identity, err)
	}
	r.req.CSR = csr
	return nil
}

// configuration builds configure's input from the helper's answer: the private key encrypted
// for the node when the helper sent one, and a server JWT when features.ed25519 is on.
func (f *Flow) configuration(r *run, resp *helper.Response) (rpc.Configuration, error) {
	cfg := rpc.Configuration{
		Certificate:    resp.Certificate,
		CA:             resp.CA,
		SSLDir:         resp.SSLDir,
		ActionPolicies: resp.ActionPolicies,
		OPAPolicies:    resp.OPAPolicies,
	}
	if len(resp.Configuration) > 0 {
		b, err := json.Marshal(resp.Configuration)
		if err != nil {
			return cfg, fmt.Errorf("encode configuration for %s: %w", r.req.Identity, err)
		}
		cfg.Config = string(b)
	}
	if resp.Key != "" {
		ecdh := ""
		if r.jwt != nil {
			ecdh = r.jwt.ECDHPublic
		}
		key, err := f.d.Encrypt(resp.Key, ecdh)
		if err != nil {
			return cfg, fmt.Errorf("encrypt private key for %s: %w", r.req.Identity, err)
		}
		cfg.Key, cfg.ECDHPublic = key.PEM, key.ECDHPublic
	}
	if f.s.Features.ED25519 {
		if r.req.ED25519PubKey == nil {
			return cfg, fmt.Errorf("sign server JWT for %s: no ed25519 public key set", r.req.Identity)
		}
		signed, err := f.d.Signer.Sign(keys.ServerJWTRequest{
			Identity:      r.req.Identity,
			PublicKey:     r.req.ED25519PubKey.PublicKey,
			Claims:        resp.ServerClaims,
			Configuration: resp.Configuration,
		})
		if err != nil {
			return cfg, fmt.Errorf("sign server JWT for %s: %w", r.req.Identity, err)
		}
		cfg.ServerJWT = signed
	}
	return cfg, nil
}
