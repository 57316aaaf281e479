// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
)

// tlsFiles are PEM files named by configuration keys or flags; the names go into errors.
type tlsFiles struct {
	ca, cert, key          string
	caName, certName, name string
}

// load reads the key pair (nil when cert and key are empty) and the CA pool (nil without a CA).
func (f tlsFiles) load() (*tls.Certificate, *x509.CertPool, error) {
	var kp *tls.Certificate
	if (f.cert == "") != (f.key == "") {
		return nil, nil, fmt.Errorf("%s: give both or neither", f.name)
	}
	if f.cert != "" {
		c, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.certName, err)
		}
		kp = &c
	}
	if f.ca == "" {
		return kp, nil, nil
	}
	pem, err := os.ReadFile(f.ca)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.caName, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("%s: %s holds no PEM certificate", f.caName, f.ca)
	}
	return kp, pool, nil
}

// tlsHTTPClient is the one client set-up for calls to members, by a member (forwarding, joining)
// and by the CLI alike: it presents kp when given and trusts pool (the system roots when nil).
func tlsHTTPClient(kp *tls.Certificate, pool *x509.CertPool) *http.Client {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	if kp != nil {
		cfg.Certificates = []tls.Certificate{*kp}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}
}
