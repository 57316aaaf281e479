// SPDX-License-Identifier: Apache-2.0

// Package broker runs an embedded go-choria network broker on 127.0.0.1 set up for provisioning:
// TLS with a throwaway CA, the provisioning account (user "provisioner" with a password) and an
// ed25519 signer whose provisioning JWTs admit nodes in provisioning mode.
//
// Who may connect: a client (a provisioner, a test) with a CA-issued certificate and the
// provisioning user and password lands in the provisioning account. A node in provisioning mode
// connects with anonymous TLS and its provisioning JWT as the token, and gets the
// provisioning-server permissions: subscribe to provisioning.node.> and
// provisioning.broadcast.agent.{discovery,rpcutil,choria_util,choria_provision}, publish to
// provisioning.reply.> and provisioning.registration.>. Emulated nodes connect the same way, so
// the same permissions hold them.
//
// With Options.Streams the broker also runs Choria Streams (JetStream, stored in Dir/streams)
// and go-choria's leader election bucket CHORIA_LEADER_ELECTION, whose key `provisioner` the
// provisioning account reaches under the choria.streams API prefix: choria-provisioner's
// leader_election and a Muster edge's campaign there (streams.go).
package broker

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/choria-io/go-choria/broker/network"
	"github.com/choria-io/go-choria/choria"
	"github.com/choria-io/go-choria/config"
	"github.com/seed96588659/muster/sandbox/fleet/pki"
)

// ProvisioningUser is the broker user of the provisioning account; clients of nodes in
// provisioning mode must connect as it, over verified TLS.
const ProvisioningUser = "provisioner"

// Options configure one broker.
type Options struct {
	// Dir holds the broker's configuration, log, and (when CA is nil) its CA and signer.
	Dir string
	// Region names the broker; it prefixes the server certificate name.
	Region string
	// CA issues the broker and client certificates; a new one is made in Dir/pki when nil.
	CA *pki.CA
	// Signer signs provisioning JWTs; a new one is made in Dir/pki when nil.
	Signer *pki.Signer
	// Password of the provisioner user; random when empty.
	Password string
	// Token is the provisioning token nodes demand; random when empty.
	Token string
	// Port to listen on; a free one when 0.
	Port int
	// LogLevel of the broker's own log file Dir/broker.log (debug, info, warn, error); warn when empty.
	LogLevel string
	// Logger receives the sandbox's own messages.
	Logger *slog.Logger
	// Streams enables Choria Streams and the leader election bucket (streams.go); Start then
	// returns once the bucket answers a provisioning client.
	Streams bool
	// ElectionTTL is the election bucket's TTL with Streams: a leader that stops campaigning
	// loses its key this long after its last campaign. Default go-choria's one minute; the
	// election package wants at least 4s with its own campaign interval.
	ElectionTTL time.Duration
}

// Broker is a running embedded broker.
type Broker struct {
	opts    Options
	url     string
	port    int
	srv     *network.Server
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped sync.Once

	logsMu sync.Mutex
	// logs holds one open log file per client identity, so frameworks built again for an
	// identity share it and Stop closes them all.
	logs map[string]*clientLog
}

// Start writes the broker's configuration into opts.Dir and starts it, returning once it
// accepts TCP connections.
func Start(ctx context.Context, opts Options) (*Broker, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	// A port picked by the kernel is held until just before the broker listens: the embedded NATS
	// server cannot take a listener, and closing the probe at once left seconds (certificate
	// issuing, framework set-up) in which another process on a shared machine could bind it;
	// NATS then exits the whole process from its accept loop (logrus Fatalf).
	var reserved net.Listener
	if opts.Port == 0 {
		if reserved, err = listenFree(); err != nil {
			return nil, err
		}
		defer func() {
			if reserved != nil {
				reserved.Close()
			}
		}()
		opts.Port = reserved.Addr().(*net.TCPAddr).Port
	}
	cfgFile, err := writeConfig(opts)
	if err != nil {
		return nil, err
	}
	srv, err := newServer(cfgFile)
	if err != nil {
		return nil, err
	}

	b := &Broker{opts: opts, srv: srv, port: opts.Port, url: fmt.Sprintf("nats://127.0.0.1:%d", opts.Port)}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.cancel = cancel
	if reserved != nil {
		if err := reserved.Close(); err != nil {
			cancel()
			return nil, fmt.Errorf("release port %d for the broker: %w", opts.Port, err)
		}
		reserved = nil
	}
	b.wg.Add(1)
	go srv.Start(bctx, &b.wg)

	if err := b.waitReady(ctx, time.Minute); err != nil {
		b.Stop()
		return nil, err
	}
	if opts.Streams {
		if err := b.waitElection(ctx, time.Minute); err != nil {
			b.Stop()
			return nil, err
		}
	}
	opts.Logger.Info("broker started", "region", opts.Region, "url", b.url, "streams", opts.Streams)
	return b, nil
}

// withDefaults fills what opts leaves out, making the directory (absolute) and, unless given,
// a CA, a provisioning signer, a password and a token in it.
func (opts Options) withDefaults() (Options, error) {
	if opts.Dir == "" {
		return opts, errors.New("broker: Dir is required")
	}
	if opts.Region == "" {
		opts.Region = "lab"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "warn"
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return opts, fmt.Errorf("broker dir: %w", err)
	}
	opts.Dir = dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return opts, fmt.Errorf("broker dir: %w", err)
	}
	if opts.CA == nil {
		if opts.CA, err = pki.NewCA(filepath.Join(dir, "pki")); err != nil {
			return opts, err
		}
	}
	if opts.Signer == nil {
		if opts.Signer, err = pki.NewSigner(filepath.Join(dir, "pki")); err != nil {
			return opts, err
		}
	}
	if opts.Password == "" {
		opts.Password = randomHex(16)
	}
	if opts.Token == "" {
		opts.Token = randomHex(16)
	}
	if opts.ElectionTTL < 0 || opts.ElectionTTL > 0 && opts.ElectionTTL < 4*time.Second {
		return opts, fmt.Errorf("broker: ElectionTTL %v: want at least 4s (go-choria's election campaigns at 3/4 of it, at least 1s before it ends), or 0 for go-choria's default", opts.ElectionTTL)
	}
	return opts, nil
}

// writeConfig issues the broker's certificate and writes its go-choria configuration.
func writeConfig(opts Options) (string, error) {
	srvCert, err := opts.CA.Issue("broker-" + opts.Region)
	if err != nil {
		return "", fmt.Errorf("broker certificate: %w", err)
	}
	cfgFile := filepath.Join(opts.Dir, "broker.conf")
	body := fmt.Sprintf(`# written by muster-sandbox: embedded provisioning broker for region %[1]s
identity = broker-%[1]s
logfile = %[2]s
loglevel = %[3]s
plugin.choria.use_srv = false
plugin.choria.network.listen_address = 127.0.0.1
plugin.choria.network.client_port = %[4]d
plugin.choria.network.public_url = 127.0.0.1:%[4]d
plugin.choria.network.client_tls_force_required = true
plugin.choria.network.tls_timeout = 10s
plugin.choria.network.auth_timeout = 10s
plugin.security.provider = file
plugin.security.file.certificate = %[5]s
plugin.security.file.key = %[6]s
plugin.security.file.ca = %[7]s
plugin.choria.network.provisioning.client_password = %[8]s
plugin.choria.network.provisioning.signer_cert = %[9]s
`, opts.Region, filepath.Join(opts.Dir, "broker.log"), opts.LogLevel, opts.Port,
		srvCert.CertFile, srvCert.KeyFile, opts.CA.CAFile(), opts.Password, opts.Signer.PublicKeyFile())
	if opts.Streams {
		body += streamsConfig(opts)
	}
	if err := os.WriteFile(cfgFile, []byte(body), 0o600); err != nil {
		return "", fmt.Errorf("write broker config: %w", err)
	}
	return cfgFile, nil
}

// newServer builds go-choria's network broker from the configuration file.
func newServer(cfgFile string) (*network.Server, error) {
	cfg, err := config.NewConfig(cfgFile)
	if err != nil {
		return nil, fmt.Errorf("load broker config %s: %w", cfgFile, err)
	}
	fw, err := choria.NewWithConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("broker framework: %w", err)
	}
	srv, err := network.NewServer(fw, fw.BuildInfo(), false)
	if err != nil {
		return nil, fmt.Errorf("new network broker: %w", err)
	}
	return srv, nil
}

func (b *Broker) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	for {
		if b.srv.Started() {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("broker %s not ready after %v (see %s)", addr, limit, filepath.Join(b.opts.Dir, "broker.log"))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for broker %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// URL is the broker's client URL, nats://127.0.0.1:PORT.
func (b *Broker) URL() string { return b.url }

// Port is the broker's client port.
func (b *Broker) Port() int { return b.port }

// Region is the region the broker serves.
func (b *Broker) Region() string { return b.opts.Region }

// Dir is the broker's directory.
func (b *Broker) Dir() string { return b.opts.Dir }

// CA is the certificate authority the broker trusts.
func (b *Broker) CA() *pki.CA { return b.opts.CA }

// Signer is the provisioning JWT signer the broker trusts.
func (b *Broker) Signer() *pki.Signer { return b.opts.Signer }

// ProvisioningPassword is the password of the provisioner user.
func (b *Broker) ProvisioningPassword() string { return b.opts.Password }

// Token is the provisioning token nodes of this broker demand.
func (b *Broker) Token() string { return b.opts.Token }

// ProvisioningJWT is a signed provisioning.jwt pointing nodes at this broker.
func (b *Broker) ProvisioningJWT(allowUpdate bool) (string, error) {
	return b.opts.Signer.Sign(pki.ProvisioningJWT{Token: b.opts.Token, BrokerURLs: []string{b.url}, AllowUpdate: allowUpdate})
}

// ClientTLS is a TLS configuration for a raw NATS connection as identity; connect with user
// ProvisioningUser and ProvisioningPassword to reach nodes in provisioning mode.
func (b *Broker) ClientTLS(identity string) (*tls.Config, error) {
	return b.opts.CA.ClientTLS(identity)
}

// Stop shuts the broker down and waits for it.
func (b *Broker) Stop() error {
	b.stopped.Do(func() {
		b.cancel()
		b.wg.Wait()
		b.closeClientLogs()
	})
	return nil
}

// listenFree holds a kernel-chosen port on 127.0.0.1 until the listener is closed.
func listenFree() (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find free port: %w", err)
	}
	return l, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
