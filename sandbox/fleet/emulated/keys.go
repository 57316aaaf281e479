// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"sync"
	"sync/atomic"
)

// ecdhKeyPair makes the X25519 pair the jwt action hands out for private-key encryption.
func ecdhKeyPair() (priv, pub []byte, err error) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	return k.Bytes(), k.PublicKey().Bytes(), nil
}

// decryptPrivateKey checks that the provisioner encrypted key with the X25519 secret shared
// between our jwt-time private key and its public key, as the real configure does.
func decryptPrivateKey(key, provisionerPub string, localPriv []byte) error {
	pb, err := hex.DecodeString(provisionerPub)
	if err != nil {
		return err
	}
	if len(localPriv) == 0 {
		return fmt.Errorf("private key not set")
	}
	priv, err := ecdh.X25519().NewPrivateKey(localPriv)
	if err != nil {
		return err
	}
	remote, err := ecdh.X25519().NewPublicKey(pb)
	if err != nil {
		return err
	}
	secret, err := priv.ECDH(remote)
	if err != nil {
		return err
	}
	block, _ := pem.Decode([]byte(key))
	if block == nil {
		return fmt.Errorf("bad key received")
	}
	//lint:ignore SA1019 the provisioner encrypts with legacy PEM encryption; this is its only reader
	if !x509.IsEncryptedPEMBlock(block) {
		return fmt.Errorf("key is not encrypted")
	}
	//lint:ignore SA1019 see above
	if _, err := x509.DecryptPEMBlock(block, secret); err != nil {
		return err
	}
	return nil
}

// keyPool holds a few RSA keys shared by all emulated nodes for gencsr: generating a 2048-bit
// key per request (as a real node does) would cost the shared CPU ~100 ms a node, while a CSR
// over an existing key costs one signature. Each CSR still carries the node's own subject.
type keyPool struct {
	size int
	mu   sync.Mutex
	keys []*rsa.PrivateKey
	pems []string
	next atomic.Uint64
}

func newKeyPool(size int) *keyPool {
	if size < 1 {
		size = 1
	}
	return &keyPool{size: size}
}

// ownKey is one node's own RSA key pair with its public key in PEM.
type ownKey struct {
	key *rsa.PrivateKey
	pub string
}

// newRSAKey makes a 2048-bit key, as go-choria's gencsr does, with its public PEM.
func newRSAKey() (*rsa.PrivateKey, string, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, "", fmt.Errorf("generate RSA key: %w", err)
	}
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.PublicKey)})), nil
}

// csr answers gencsr for n, whose mutex the caller holds: over the node's own key when it has a
// re-entry fault (so a rebuilt node's key differs from its earlier lives'), else over one of the
// fleet's shared keys.
func (n *node) csr(args csrRequest) (string, string, error) {
	if n.reentry == nil {
		return n.fleet.keys.csr(args)
	}
	if n.key == nil {
		k, pub, err := newRSAKey()
		if err != nil {
			return "", "", err
		}
		n.key = &ownKey{key: k, pub: pub}
	}
	return csrOver(n.key.key, n.key.pub, args)
}

func (p *keyPool) key() (*rsa.PrivateKey, string, error) {
	i := int(p.next.Add(1) % uint64(p.size))
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.keys) <= i {
		k, pub, err := newRSAKey()
		if err != nil {
			return nil, "", err
		}
		p.keys = append(p.keys, k)
		p.pems = append(p.pems, pub)
	}
	return p.keys[i], p.pems[i], nil
}

// csr builds a PEM CSR for the subject the request asks for, with the real agent's field mapping.
func (p *keyPool) csr(args csrRequest) (csrPEM, pubPEM string, err error) {
	k, pub, err := p.key()
	if err != nil {
		return "", "", err
	}
	return csrOver(k, pub, args)
}

// csrOver builds the PEM CSR over key k whose public PEM is pub.
func csrOver(k *rsa.PrivateKey, pub string, args csrRequest) (csrPEM, pubPEM string, err error) {
	subj := pkix.Name{CommonName: args.CN}
	if args.C != "" {
		subj.Country = []string{args.C}
	}
	if args.L != "" {
		subj.Locality = []string{args.L}
	}
	if args.O != "" {
		subj.Organization = []string{args.O}
	}
	if args.OU != "" {
		subj.OrganizationalUnit = []string{args.OU}
	}
	raw, err := asn1.Marshal(subj.ToRDNSequence())
	if err != nil {
		return "", "", err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		RawSubject:         raw,
		SignatureAlgorithm: x509.SHA256WithRSA,
	}, k)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), pub, nil
}
