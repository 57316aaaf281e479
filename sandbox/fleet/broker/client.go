// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/choria-io/go-choria/choria"
	"github.com/choria-io/go-choria/config"
	"github.com/sirupsen/logrus"
)

// ClientConfig writes (once) a Choria client configuration for identity into Dir/clients and
// returns its path. Any Choria client can use it unchanged: it names the broker, the file
// security provider with identity's RSA certificate, the provisioning collective, and the
// provisioner user and password. Choria takes a non-root user's identity from $USER unless
// MCOLLECTIVE_CERTNAME is set, so set MCOLLECTIVE_CERTNAME=identity when not running as root.
func (b *Broker) ClientConfig(identity string) (string, error) {
	cert, err := b.opts.CA.Issue(identity)
	if err != nil {
		return "", fmt.Errorf("client config for %s: %w", identity, err)
	}
	dir := filepath.Join(b.opts.Dir, "clients")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("client config for %s: %w", identity, err)
	}
	path := filepath.Join(dir, identity+".conf")
	body := fmt.Sprintf(`# Choria client configuration for %[1]s against the sandbox broker of region %[2]s
identity = %[1]s
logfile = %[3]s
loglevel = warn
collectives = provisioning
main_collective = provisioning
plugin.choria.use_srv = false
plugin.choria.middleware_hosts = 127.0.0.1:%[4]d
plugin.security.provider = file
plugin.security.file.certificate = %[5]s
plugin.security.file.key = %[6]s
plugin.security.file.ca = %[7]s
plugin.nats.user = %[8]s
plugin.nats.pass = %[9]s
`, identity, b.opts.Region, filepath.Join(dir, identity+".log"), b.port,
		cert.CertFile, cert.KeyFile, b.opts.CA.CAFile(), ProvisioningUser, b.opts.Password)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return "", fmt.Errorf("write client config %s: %w", path, err)
	}
	return path, nil
}

// ClientFramework is a go-choria client framework for identity, ready for the generated RPC
// clients (rpcutilclient, choria_provisionclient) and broadcast discovery against this broker.
// It logs warnings to the client's log file, which stays open until Stop.
func (b *Broker) ClientFramework(identity string) (*choria.Framework, error) {
	path, err := b.ClientConfig(identity)
	if err != nil {
		return nil, err
	}
	lf, err := b.clientLog(identity)
	if err != nil {
		return nil, err
	}
	return LoadClientFramework(path, identity, lf)
}

// clientLog opens identity's log file once per broker.
func (b *Broker) clientLog(identity string) (*clientLog, error) {
	b.logsMu.Lock()
	defer b.logsMu.Unlock()
	if lf, ok := b.logs[identity]; ok {
		return lf, nil
	}
	path := filepath.Join(b.opts.Dir, "clients", identity+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("client log for %s: %w", identity, err)
	}
	if b.logs == nil {
		b.logs = map[string]*clientLog{}
	}
	lf := &clientLog{f: f}
	b.logs[identity] = lf
	return lf, nil
}

func (b *Broker) closeClientLogs() {
	b.logsMu.Lock()
	defer b.logsMu.Unlock()
	for id, lf := range b.logs {
		lf.close()
		delete(b.logs, id)
	}
}

// clientLog is a client framework's log file. Connections a caller never closed still log
// their disconnection after Stop, so writes after close are dropped instead of failing; and
// since it is not an *os.File, logrus does not probe its descriptor while Stop closes it.
type clientLog struct {
	mu sync.Mutex
	f  *os.File
}

func (l *clientLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return len(p), nil
	}
	return l.f.Write(p)
}

func (l *clientLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// LoadClientFramework builds a client framework from a client config file, forcing the
// certificate name to identity so the caller id does not depend on the user running it.
// Warnings go to log rather than the config's logfile: go-choria would open that file for every
// framework and never close it.
func LoadClientFramework(path, identity string, log io.Writer) (*choria.Framework, error) {
	cfg, err := config.NewConfig(path)
	if err != nil {
		return nil, fmt.Errorf("load client config %s: %w", path, err)
	}
	cfg.OverrideCertname = identity
	l := logrus.New()
	l.SetOutput(log)
	l.SetLevel(logrus.WarnLevel)
	cfg.CustomLogger = l
	fw, err := choria.NewWithConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("client framework for %s: %w", identity, err)
	}
	return fw, nil
}
