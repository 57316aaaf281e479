// SPDX-License-Identifier: Apache-2.0

package rpc

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
)

// Signing chooses which requests Conn signs with the caller's RSA key.
//
// A provisioning-mode server verifies request signatures only when its provisioning JWT says
// chs (choria secure) true; otherwise go-choria sets protocol.Secure=false at start and its
// SecureRequest.Valid returns true without reading the signature or the certificate (go-choria
// v0.30.0 choria/framework.go and protocol/v1/security_request.go). Leaving the signature out
// for such a node gives nothing away: the node would not check it, and what authenticates the
// provisioner to it is the provisioning token inside every choria_provision request and the
// broker's TLS, both unchanged. RSA-2048 signing is most of a request's client CPU.
type Signing int

const (
	// SignAuto signs every request except those marked Unsigned, which the host flow does once
	// the node's provisioning JWT said it does not verify (Node.SetSigning(false)).
	SignAuto Signing = iota
	// SignAlways signs every request, Unsigned or not.
	SignAlways
	// SignNever signs no request; a node whose JWT has chs true drops every one.
	SignNever
)

// String names the mode as the edge's request_signing setting does.
func (s Signing) String() string {
	switch s {
	case SignAuto:
		return "auto"
	case SignAlways:
		return "always"
	case SignNever:
		return "never"
	}
	return fmt.Sprintf("Signing(%d)", int(s))
}

// signs reports whether a request marked unsigned (or not) is signed under s.
func (s Signing) signs(unsigned bool) bool {
	switch s {
	case SignAlways:
		return true
	case SignNever:
		return false
	}
	return !unsigned
}

// requestSigner holds the caller's RSA key, parsed once, and its certificate as PEM text.
type requestSigner struct {
	key     *rsa.PrivateKey
	pubcert string
}

// tlsCertificateSource is what Conn needs of go-choria's framework to sign: the certificate and
// key the framework connects with (its security provider parses them from the files once).
type tlsCertificateSource interface {
	ClientTLSConfig() (*tls.Config, error)
}

func newRequestSigner(src tlsCertificateSource) (*requestSigner, error) {
	cfg, err := src.ClientTLSConfig()
	if err != nil {
		return nil, fmt.Errorf("request signing key: %w", err)
	}
	if len(cfg.Certificates) == 0 || len(cfg.Certificates[0].Certificate) == 0 {
		return nil, errors.New("request signing key: the framework has no client certificate")
	}
	c := cfg.Certificates[0]
	key, ok := c.PrivateKey.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("request signing key: protocol v1 signs with RSA, the key is %T", c.PrivateKey)
	}
	// go-choria sends the caller's certificate file as it is: the caller's certificate and any
	// chain after it, which is what the TLS certificate holds.
	var pubcert []byte
	for _, der := range c.Certificate {
		pubcert = append(pubcert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return &requestSigner{key: key, pubcert: string(pubcert)}, nil
}

// sign is go-choria's filesec SignBytes: SHA256 PKCS#1 v1.5.
func (s *requestSigner) sign(msg []byte) ([]byte, error) {
	sum := sha256.Sum256(msg)
	return rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
}
