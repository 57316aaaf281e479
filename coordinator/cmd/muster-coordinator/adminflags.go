// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed96588659/muster/pkg/api"
)

// Environment variables the admin commands read when their flag is not given.
const (
	envAddr       = "MUSTER_ADDR"
	envAdminToken = "MUSTER_AUTH_ADMIN_TOKEN" // the same variable serve reads
	envTLSCA      = "MUSTER_TLS_CA"
	envTLSCert    = "MUSTER_TLS_CERT"
	envTLSKey     = "MUSTER_TLS_KEY"
)

// adminOpts are the connection flags of every admin command.
type adminOpts struct {
	addrs   []string
	token   string
	ca      string
	cert    string
	key     string
	timeout time.Duration
	json    bool
}

func addAdminFlags(cmd *cobra.Command) *adminOpts {
	o := &adminOpts{}
	f := cmd.Flags()
	f.StringSliceVar(&o.addrs, "addr", nil, "API base URL of one or more members (env "+envAddr+", default http://127.0.0.1:8000)")
	f.StringVar(&o.token, "admin-token", "", "admin bearer token (env "+envAdminToken+"; prefer the environment: flags show in ps)")
	f.StringVar(&o.ca, "tls-ca", "", "PEM CA the members' certificates chain to (env "+envTLSCA+")")
	f.StringVar(&o.cert, "tls-cert", "", "PEM client certificate (env "+envTLSCert+")")
	f.StringVar(&o.key, "tls-key", "", "PEM client key (env "+envTLSKey+")")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up after this long")
	f.BoolVar(&o.json, "json", false, "print the answer as JSON")
	return o
}

func envIfEmpty(v *string, name string) {
	if *v == "" {
		*v = strings.TrimSpace(os.Getenv(name))
	}
}

// client builds the API client from the flags and the environment.
func (o *adminOpts) client() (*api.Client, error) {
	if len(o.addrs) == 0 {
		if e := os.Getenv(envAddr); e != "" {
			o.addrs = strings.FieldsFunc(e, func(r rune) bool { return r == ',' || r == ' ' })
		}
	}
	if len(o.addrs) == 0 {
		o.addrs = []string{"http://127.0.0.1:8000"}
	}
	envIfEmpty(&o.token, envAdminToken)
	envIfEmpty(&o.ca, envTLSCA)
	envIfEmpty(&o.cert, envTLSCert)
	envIfEmpty(&o.key, envTLSKey)
	if o.token == "" && o.cert == "" {
		// An admin bound to a client certificate (auth.admins NAME:ROLE) sends no token.
		return nil, errors.New("no admin token: set --admin-token or " + envAdminToken + ", or --tls-cert and --tls-key for an admin bound to its client certificate")
	}
	hc, err := clientHTTP(o.ca, o.cert, o.key)
	if err != nil {
		return nil, err
	}
	return api.NewClient(o.addrs, api.WithToken(o.token), api.WithHTTPClient(hc))
}

// context bounds the command by --timeout.
func (o *adminOpts) context(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return context.WithTimeout(cmd.Context(), o.timeout)
}

// clientHTTP returns an HTTP client that trusts ca and presents cert/key when given.
func clientHTTP(ca, cert, key string) (*http.Client, error) {
	if ca == "" && cert == "" && key == "" {
		return &http.Client{}, nil
	}
	kp, pool, err := tlsFiles{ca: ca, cert: cert, key: key, caName: "tls ca", certName: "tls client certificate", name: "tls cert and key"}.load()
	if err != nil {
		return nil, err
	}
	return tlsHTTPClient(kp, pool), nil
}
