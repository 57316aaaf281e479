// SPDX-License-Identifier: Apache-2.0

package main_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/choria-io/go-choria/config"
	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
)

var binary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "helper-sample-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "muster-helper-sample")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// runners returns an Exec and a Persistent runner of the sample with args; each test runs both.
func runners(t *testing.T, args string) map[string]helper.Runner {
	t.Helper()
	opts := helper.Options{Command: binary + " " + args}
	e, err := helper.NewExec(opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Command += " --persistent"
	p, err := helper.NewPersistent(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return map[string]helper.Runner{"exec": e, "persistent": p}
}

const flags = "--broker nats://127.0.0.1:4222 --upgrade 0.30.0 --defer '^later-' --shutdown '^old-' --fail '^broken-'"

func TestSample_ConfiguresAServerGoChoriaAccepts(t *testing.T) {
	for mode, r := range runners(t, flags) {
		t.Run(mode, func(t *testing.T) {
			res, err := r.Run(context.Background(), &helper.Request{Identity: "n1.example.net", Inventory: `{"version":"0.29.4"}`})
			if err != nil {
				t.Fatal(err)
			}
			if res.Defer || res.Shutdown || res.Upgrade != "0.30.0" || res.Key != "" {
				t.Fatalf("answer %+v", res)
			}
			cfg := parseConfig(t, res.Configuration)
			if cfg.Identity != "n1.example.net" || cfg.Choria.Provision || !slices.Equal(cfg.Choria.MiddlewareHosts, []string{"nats://127.0.0.1:4222"}) ||
				cfg.MainCollective != "mcollective" || !slices.Equal(cfg.Collectives, []string{"mcollective"}) || cfg.LogLevel != "info" {
				t.Fatalf("configuration %v parsed as identity %q provision %v hosts %v collectives %v/%q", res.Configuration, cfg.Identity, cfg.Choria.Provision, cfg.Choria.MiddlewareHosts, cfg.Collectives, cfg.MainCollective)
			}
		})
	}
}

// parseConfig writes settings as choria_provision#configure does and loads them with go-choria's
// loader, which refuses what a real node would refuse.
func parseConfig(t *testing.T, settings map[string]string) *config.Config {
	t.Helper()
	var b strings.Builder
	for k, v := range settings {
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	path := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.NewConfig(path)
	if err != nil {
		t.Fatalf("go-choria refuses the configuration: %v", err)
	}
	return cfg
}

func TestSample_DeferShutdownAndFail(t *testing.T) {
	for mode, r := range runners(t, flags) {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			res, err := r.Run(ctx, &helper.Request{Identity: "later-1"})
			if err != nil || !res.Defer || res.Msg == "" || res.Configuration != nil {
				t.Fatalf("later-1: %+v %v, want deferred", res, err)
			}
			res, err = r.Run(ctx, &helper.Request{Identity: "old-1"})
			if err != nil || !res.Shutdown || res.Defer {
				t.Fatalf("old-1: %+v %v, want shut down", res, err)
			}
			_, err = r.Run(ctx, &helper.Request{Identity: "broken-1"})
			want := helper.ErrExit
			if mode == "persistent" {
				want = helper.ErrFailed
			}
			if !errors.Is(err, want) {
				t.Fatalf("broken-1: %v, want %v", err, want)
			}
			// a failed node does not stop the next one being configured
			if res, err = r.Run(ctx, &helper.Request{Identity: "n2"}); err != nil || res.Configuration["identity"] != "n2" {
				t.Fatalf("n2 after a failure: %+v %v", res, err)
			}
		})
	}
}

func TestSample_SignsTheNodesCSR(t *testing.T) {
	dir := t.TempDir()
	ca := testkit.NewCA(t, "test CA")
	caCert, caFile, keyFile := ca.Cert(), ca.WriteCA(t, dir), ca.WriteKey(t, dir)
	for mode, r := range runners(t, flags+" --ca "+caFile+" --ca-key "+keyFile) {
		t.Run(mode, func(t *testing.T) {
			nodeKey, csrPEM := testkit.CSR(t, "n1.example.net")
			ssldir := filepath.Join(dir, "node", "ssl")
			res, err := r.Run(context.Background(), &helper.Request{Identity: "n1.example.net", CSR: &rpc.CSR{CSR: csrPEM, SSLDir: ssldir}})
			if err != nil {
				t.Fatal(err)
			}
			blk, _ := pem.Decode([]byte(res.Certificate))
			if blk == nil {
				t.Fatalf("no certificate in %q", res.Certificate)
			}
			cert, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			pool := x509.NewCertPool()
			pool.AddCert(caCert)
			if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "n1.example.net", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Fatalf("certificate does not verify: %v", err)
			}
			if !nodeKey.PublicKey.Equal(cert.PublicKey) {
				t.Fatal("certificate is not for the CSR's key")
			}
			if res.SSLDir != ssldir || !strings.Contains(res.CA, "BEGIN CERTIFICATE") || res.Key != "" {
				t.Fatalf("ssldir %q ca %q key set %v", res.SSLDir, res.CA, res.Key != "")
			}
			cfg := parseConfig(t, res.Configuration)
			if cfg.Choria.SecurityProvider != "file" || cfg.Choria.FileSecurityCertificate != filepath.Join(ssldir, "certificate.pem") ||
				cfg.Choria.FileSecurityKey != filepath.Join(ssldir, "private.pem") || cfg.Choria.FileSecurityCA != filepath.Join(ssldir, "ca.pem") {
				t.Fatalf("security settings %v", res.Configuration)
			}

			// a CSR for another identity is refused
			_, other := testkit.CSR(t, "intruder.example.net")
			if _, err := r.Run(context.Background(), &helper.Request{Identity: "n1.example.net", CSR: &rpc.CSR{CSR: other, SSLDir: ssldir}}); err == nil {
				t.Fatal("signed a CSR for another identity")
			}
		})
	}
}

func TestSample_RefusesBadFlags(t *testing.T) {
	for _, args := range []string{"", "--broker x:1 --defer '('", "--broker x:1 --ca /nonexistent", "--broker x:1 extra"} {
		e, err := helper.NewExec(helper.Options{Command: binary + " " + args})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(context.Background(), &helper.Request{Identity: "n1"}); !errors.Is(err, helper.ErrExit) {
			t.Errorf("%q: %v, want ErrExit", args, err)
		}
	}
}
