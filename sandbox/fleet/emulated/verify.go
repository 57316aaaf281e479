// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// verifier checks requests as go-choria's file security provider does on a secure server: the
// caller's certificate chains to the CA, names the caller, the caller is on the default allow
// list, and the RSA signature covers the request. Certificates are checked once and cached.
type verifier struct {
	roots    *x509.CertPool
	callerRe *regexp.Regexp
	allowRe  *regexp.Regexp
	mu       sync.Mutex
	certs    map[string]*verifiedCert
}

type verifiedCert struct {
	key *rsa.PublicKey
	// names are the certificate's DNS names and common name.
	names []string
	err   error
}

func newVerifier(roots *x509.CertPool) *verifier {
	return &verifier{
		roots:    roots,
		callerRe: regexp.MustCompile(`^[a-z]+=([\w\.\-]+)`),
		allowRe:  regexp.MustCompile(`\.mcollective$|\.choria$`),
		certs:    map[string]*verifiedCert{},
	}
}

func (v *verifier) verify(req *request) error {
	m := v.callerRe.FindStringSubmatch(req.Caller)
	if m == nil {
		return fmt.Errorf("could not find a valid caller identity name in %s", req.Caller)
	}
	name := m[1]
	vc := v.cert(req.PubCert)
	if vc.err != nil {
		return vc.err
	}
	if !slices.Contains(vc.names, name) {
		return fmt.Errorf("x509: certificate is valid for %v, not %s", vc.names, name)
	}
	if !v.allowRe.MatchString(name) {
		return fmt.Errorf("caller %s is not on the allow list", name)
	}
	sig, err := base64.StdEncoding.DecodeString(req.Signature)
	if err != nil {
		return fmt.Errorf("could not base64 decode signature: %w", err)
	}
	sum := sha256.Sum256([]byte(req.Signed))
	if err := rsa.VerifyPKCS1v15(vc.key, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature in request did not pass validation: %w", err)
	}
	return nil
}

func (v *verifier) cert(pemText string) *verifiedCert {
	v.mu.Lock()
	defer v.mu.Unlock()
	if vc, ok := v.certs[pemText]; ok {
		return vc
	}
	vc := &verifiedCert{}
	v.certs[pemText] = vc
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		vc.err = fmt.Errorf("caller certificate is not PEM")
		return vc
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		vc.err = fmt.Errorf("parse caller certificate: %w", err)
		return vc
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: v.roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		vc.err = fmt.Errorf("caller certificate: %w", err)
		return vc
	}
	key, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		vc.err = fmt.Errorf("caller certificate key is %T, want RSA", cert.PublicKey)
		return vc
	}
	vc.key, vc.names = key, append(slices.Clone(cert.DNSNames), cert.Subject.CommonName)
	return vc
}
