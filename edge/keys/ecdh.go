// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/choria-io/go-choria/choria"
)

var (
	// ErrNoKey is returned when there is no private key to encrypt.
	ErrNoKey = errors.New("no key to encrypt")
	// ErrNoDiffieHellman fails a node that gets a private key from the helper but sent no
	// ecdh_public in its jwt reply, so the key cannot reach it encrypted.
	ErrNoDiffieHellman = errors.New("private key received from helper but server did not start Diffie-Hellman exchange")
	// ErrBadKey fails a node whose helper-supplied private key is not PEM.
	ErrBadKey = errors.New("bad key received")
)

// EncryptedKey is a helper's private key encrypted for one node.
type EncryptedKey struct {
	// PEM is the key as an AES-256 encrypted "RSA PRIVATE KEY" PEM block, the form go-choria's
	// provision agent decrypts in configure.
	PEM string
	// ECDHPublic is the provisioner's half of the exchange in hex, sent to the node as the
	// configure request's ecdh_public so it can derive the same secret.
	ECDHPublic string
}

// EncryptPrivateKey encrypts keyPEM, the helper's private key for a node, with a secret shared
// with that node by curve25519 Diffie-Hellman: serverPublic is the hex ecdh_public of its jwt
// reply. Each call uses a fresh key pair, so no two nodes share a secret.
func EncryptPrivateKey(keyPEM, serverPublic string) (EncryptedKey, error) {
	if keyPEM == "" {
		return EncryptedKey{}, ErrNoKey
	}
	if serverPublic == "" {
		return EncryptedKey{}, ErrNoDiffieHellman
	}
	block, _ := pem.Decode([]byte(keyPEM))
	if block == nil {
		return EncryptedKey{}, ErrBadKey
	}
	remote, err := hex.DecodeString(serverPublic)
	if err != nil {
		return EncryptedKey{}, fmt.Errorf("server ecdh_public: %w", err)
	}

	pri, pub, err := choria.ECDHKeyPair()
	if err != nil {
		return EncryptedKey{}, fmt.Errorf("ECDH key pair: %w", err)
	}
	secret, err := choria.ECDHSharedSecret(pri, remote)
	if err != nil {
		return EncryptedKey{}, fmt.Errorf("ECDH shared secret with server ecdh_public: %w", err)
	}

	// go-choria's provision agent decrypts with x509.DecryptPEMBlock: the legacy PEM encryption
	// is the wire format, not a choice.
	//lint:ignore SA1019 the node decrypts this format
	enc, err := x509.EncryptPEMBlock(rand.Reader, "RSA PRIVATE KEY", block.Bytes, secret, x509.PEMCipherAES256) //nolint:staticcheck
	if err != nil {
		return EncryptedKey{}, fmt.Errorf("encrypt private key: %w", err)
	}
	return EncryptedKey{PEM: string(pem.EncodeToMemory(enc)), ECDHPublic: hex.EncodeToString(pub)}, nil
}
