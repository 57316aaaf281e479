// SPDX-License-Identifier: Apache-2.0

package app

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/seed96588659/muster/edge/config"
)

// coordinatorHTTP is the HTTP client towards the coordinators: the edge's client certificate and
// the CA of the coordinators' certificates when configured, bounded dials and answers. A long
// poll is answered within the coordinator's lease.max_wait (at most a third of its TTL), so no
// overall timeout is set here; every call carries its own context. The answer timeout is only
// a backstop for a member that went silent without a reset: renewals and heartbeats bound each
// member's attempt far tighter themselves (lease.Coordinator), as a renewal held for it would
// outlast the lease.
func coordinatorHTTP(cfg *config.Config) (*http.Client, error) {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
	if cfg.CoordinatorTLSCert != "" || cfg.CoordinatorTLSCA != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CoordinatorTLSCert != "" {
			cert, err := tls.LoadX509KeyPair(cfg.CoordinatorTLSCert, cfg.CoordinatorTLSKey)
			if err != nil {
				return nil, fmt.Errorf("coordinator_tls_cert: load %s with coordinator_tls_key: %w", cfg.CoordinatorTLSCert, err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		if cfg.CoordinatorTLSCA != "" {
			pem, err := os.ReadFile(cfg.CoordinatorTLSCA)
			if err != nil {
				return nil, fmt.Errorf("coordinator_tls_ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("coordinator_tls_ca: %s holds no PEM certificate", cfg.CoordinatorTLSCA)
			}
			tc.RootCAs = pool
		}
		tr.TLSClientConfig = tc
	}
	return &http.Client{Transport: tr}, nil
}

// credentialRemedy tells the operator what to change when the coordinators refuse the edge's
// credential: the settings the edge reads it from, and where the coordinators bind it.
func credentialRemedy(cfg *config.Config, name string) string {
	have := "coordinator_token (" + config.EnvName("coordinator_token") + ")"
	if cfg.CoordinatorTLSCert != "" {
		have = "coordinator_tls_cert and coordinator_tls_key (the certificate's common name is the edge)"
		if cfg.CoordinatorToken != "" {
			have = "coordinator_token (" + config.EnvName("coordinator_token") + ") or coordinator_tls_cert and coordinator_tls_key"
		}
	}
	return fmt.Sprintf("remedy: give the edge in %s the credential the coordinators bind to edge %q in region %q (their auth.edges), or bind this one there; "+
		"the edge keeps trying and is ready again by itself once the coordinators accept it (restart it after changing its settings)", have, name, cfg.Region)
}
