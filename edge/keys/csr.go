// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrNoCSR fails a node that returned no certificate signing request.
var ErrNoCSR = errors.New("no CSR received")

// DefaultCertDenyList is cert_deny_list when it is not configured: names in Choria's
// privileged and collective domains.
func DefaultCertDenyList() []string {
	return []string{`\.privileged.mcollective$`, `\.privileged.choria$`, `\.mcollective$`, `\.choria$`}
}

// DenyList is a compiled cert_deny_list: names a node's CSR may not carry.
type DenyList struct {
	patterns []denied
}

type denied struct {
	source string
	re     *regexp.Regexp
}

// NewDenyList compiles cert_deny_list; an empty list means DefaultCertDenyList. A pattern may be
// written bare or between slashes (/re/); both are unanchored regular expressions.
func NewDenyList(patterns []string) (*DenyList, error) {
	if len(patterns) == 0 {
		patterns = DefaultCertDenyList()
	}
	d := &DenyList{patterns: make([]denied, 0, len(patterns))}
	for i, p := range patterns {
		expr := p
		if len(expr) > 2 && strings.HasPrefix(expr, "/") && strings.HasSuffix(expr, "/") {
			expr = expr[1 : len(expr)-1]
		}
		// an empty pattern matches every name: it is a typo, not a policy
		if expr == "" {
			return nil, fmt.Errorf("cert_deny_list[%d] is empty", i)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("cert_deny_list[%d] %q: %w", i, p, err)
		}
		d.patterns = append(d.patterns, denied{source: p, re: re})
	}
	return d, nil
}

// Match returns the first pattern that name matches.
func (d *DenyList) Match(name string) (pattern string, ok bool) {
	for _, p := range d.patterns {
		if p.re.MatchString(name) {
			return p.source, true
		}
	}
	return "", false
}

// ValidateCSR checks csrPEM, a node's CSR reply: it must parse, carry a valid signature, have
// identity as its common name, and no common name or DNS name the deny list matches.
func (d *DenyList) ValidateCSR(identity, csrPEM string) (*x509.CertificateRequest, error) {
	if csrPEM == "" {
		return nil, ErrNoCSR
	}
	block, _ := pem.Decode([]byte(csrPEM))
	if block == nil {
		return nil, fmt.Errorf("could not parse CSR: no PEM block found")
	}
	csr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("could not parse CSR: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("CSR signature: %w", err)
	}

	if cn := csr.Subject.CommonName; cn != identity {
		return nil, fmt.Errorf("common name %s does not match identity %s", cn, identity)
	}
	for _, name := range append([]string{csr.Subject.CommonName}, csr.DNSNames...) {
		if p, ok := d.Match(name); ok {
			return nil, fmt.Errorf("%s matches denied certificate pattern %s", name, p)
		}
	}
	return csr, nil
}
