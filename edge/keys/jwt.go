// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/choria-io/tokens"
)

var (
	// ErrNoJWT fails a node that returned no provisioning JWT.
	ErrNoJWT = errors.New("no JWT received")
	// ErrNoVerifyCert fails a node's JWT when jwt_verify_cert is not configured.
	ErrNoVerifyCert = errors.New("no JWT verification certificate configured, cannot validate JWT")
)

// JWTVerifier validates the provisioning JWTs nodes present, against jwt_verify_cert.
type JWTVerifier struct {
	static   any // the hex ed25519 key given inline, when jwt_verify_cert is not a file
	file     *fileCache[any]
	verified verifiedCache
	now      func() time.Time
}

// NewJWTVerifier builds a verifier from jwt_verify_cert: the path of a PEM certificate or public
// key (RSA or ed25519) or of a hex ed25519 public key, or, when no such file exists, a hex
// ed25519 public key itself. An empty cert builds a verifier that fails every JWT with
// ErrNoVerifyCert, as choria-provisioner does; an unreadable or unparsable one is an error now.
func NewJWTVerifier(cert string, reload Reload) (*JWTVerifier, error) {
	if err := reload.validate(); err != nil {
		return nil, err
	}
	if cert == "" {
		return &JWTVerifier{now: time.Now}, nil
	}

	if _, err := os.Stat(cert); errors.Is(err, fs.ErrNotExist) {
		pk, err := parseHexEd25519Public(cert)
		if err != nil {
			return nil, fmt.Errorf("jwt_verify_cert is neither an existing file nor a hex ed25519 public key: %w", err)
		}
		return &JWTVerifier{static: pk, now: time.Now}, nil
	}

	v := &JWTVerifier{file: newFileCache("jwt_verify_cert", cert, reload, parseVerifyKey), now: time.Now}
	if _, err := v.file.get(); err != nil {
		return nil, err
	}
	return v, nil
}

// Validate verifies raw, a node's provisioning JWT, and returns its claims. The claims' Secure
// field (the chs claim) says whether the node verifies request signatures, so whether requests
// to it must be signed.
func (v *JWTVerifier) Validate(raw string) (*tokens.ProvisioningClaims, error) {
	if raw == "" {
		return nil, ErrNoJWT
	}

	pk := v.static
	if v.file != nil {
		var err error
		if pk, err = v.file.get(); err != nil {
			return nil, err
		}
	}
	if pk == nil {
		return nil, ErrNoVerifyCert
	}

	if claims, ok := v.verified.get(raw, pk, v.now()); ok {
		return claims, nil
	}
	claims, err := tokens.ParseProvisioningToken(raw, pk)
	if err != nil {
		return nil, fmt.Errorf("invalid provisioning JWT: %w", err)
	}
	v.verified.put(raw, pk, claims)
	return claims, nil
}

// parseVerifyKey reads what tokens.ParseProvisioningTokenWithKeyfile reads (an RSA certificate or
// public key in PEM, or a hex ed25519 public key) and ed25519 ones in PEM as well.
func parseVerifyKey(data []byte) (any, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return parseHexEd25519Public(trimmed(data))
	}

	var pub any
	switch block.Type {
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		pub = cert.PublicKey
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse public key: %w", err)
		}
		pub = k
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse RSA public key: %w", err)
		}
		pub = k
	default:
		return nil, fmt.Errorf("PEM block %q holds no public key", block.Type)
	}

	switch k := pub.(type) {
	case *rsa.PublicKey, ed25519.PublicKey:
		return k, nil
	default:
		return nil, fmt.Errorf("unsupported public key type %T, want RSA or ed25519", pub)
	}
}

func parseHexEd25519Public(s string) (ed25519.PublicKey, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode hex ed25519 public key: %w", err)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("ed25519 public key is %d bytes, want %d", len(b), ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}
