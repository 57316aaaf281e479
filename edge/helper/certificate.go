// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
)

// checkCertificate refuses an answer for identity whose certificate is another's: its common
// name or one of its DNS names must be identity. The node would otherwise be configured with
// another node's name (a helper that mixed up its answers, or signed the wrong CSR). The first
// PEM block is the node's own certificate; any after it are its chain.
func checkCertificate(helper, identity, certPEM string) error {
	if certPEM == "" {
		return nil
	}
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil || block.Type != "CERTIFICATE" {
		return fmt.Errorf("helper %s: %w: the certificate for %s is not a PEM certificate", helper, ErrWrongCertificate, identity)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return fmt.Errorf("helper %s: %w: the certificate for %s does not parse: %w", helper, ErrWrongCertificate, identity, err)
	}
	if cert.Subject.CommonName == identity {
		return nil
	}
	for _, name := range cert.DNSNames {
		// DNS names are case-insensitive
		if strings.EqualFold(name, identity) {
			return nil
		}
	}
	return fmt.Errorf("helper %s: %w: the certificate for %s is for %q (DNS names %q)", helper, ErrWrongCertificate, identity, cert.Subject.CommonName, cert.DNSNames)
}
