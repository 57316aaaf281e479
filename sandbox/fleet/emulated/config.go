// SPDX-License-Identifier: Apache-2.0

package emulated

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/seed96588659/muster/sandbox/fleet/faults"
	"github.com/seed96588659/muster/sandbox/fleet/recorder"
)

// Config describes one region's emulated fleet.
type Config struct {
	// BrokerURL is the region's provisioning broker, e.g. tls://127.0.0.1:4222.
	BrokerURL string
	// TLS is used for its RootCAs (and server name) only: the fleet never presents a client
	// certificate, because the broker admits provisioning-mode servers as unverified TLS
	// connections with the provisioning JWT as token. nil dials as a real provisioning-mode
	// server does (TLS, server certificate not verified).
	TLS *tls.Config
	// Region names the fleet in recorded actions and selects region-scoped faults.
	Region string
	// Prefix starts every identity; node i is Prefix followed by i in five digits.
	Prefix string
	// Count is how many nodes the fleet has.
	Count int
	// Token is the provisioning token the nodes require in every choria_provision request;
	// empty accepts any token, as a server built without one does.
	Token string
	// JWT is the provisioning.jwt the nodes present to the broker and return from
	// choria_provision#jwt; its "update" claim makes them upgradable.
	JWT string
	// Version is what nodes report before any release_update.
	Version string
	// Faults selects misbehaving nodes; nil means none.
	Faults *faults.Set
	// Recorder receives every action a node receives, before the reply is published; nil records nothing.
	Recorder recorder.Sink
	// Logger receives the fleet's own log lines; nil discards them.
	Logger *slog.Logger

	// Facts are added to every node's facts (faults may override per node).
	Facts map[string]any
	// Connections is how many NATS connections share the fleet (queue groups split the work); default 1.
	Connections int
	// Workers is how many goroutines answer one broadcast; default GOMAXPROCS.
	Workers int
	// LockWindow is how long a caller holds a node's provisioning lock; default 2 minutes like go-choria.
	LockWindow time.Duration
	// TimeScale multiplies the restart, shutdown and update delays (splay); default 1.
	TimeScale float64
	// BootTime is how long a restarting node stays away before it is back; default 500ms.
	BootTime time.Duration
	// RecordDiscovery also records discovery#ping (10,000 lines per discovery at full scale).
	RecordDiscovery bool
	// CallerCA, when set, makes nodes verify each request's certificate and RSA signature
	// against this CA, as a secure (chs=true) provisioning server does; invalid requests are dropped.
	CallerCA *x509.CertPool
	// CheckReleases makes release_update fetch <repository>/<version>/<os>/<arch>/release.json
	// and fail like go-updater when it is missing; otherwise any repository and version succeed.
	CheckReleases bool
	// CSRKeys is how many RSA keys the fleet shares for gencsr; default 4.
	CSRKeys int
	// Now is the clock for locks and request TTLs; default time.Now.
	Now func() time.Time
}

// withDefaults validates cfg and fills the optional fields.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.BrokerURL == "":
		return c, fmt.Errorf("emulated fleet: BrokerURL is required")
	case c.Count < 0:
		return c, fmt.Errorf("emulated fleet: Count %d is negative", c.Count)
	case c.JWT == "":
		return c, fmt.Errorf("emulated fleet: JWT is required (the broker admits provisioning servers by it)")
	case strings.ContainsAny(c.Prefix, "*> \t") || strings.Contains(c.Prefix, ".."):
		return c, fmt.Errorf("emulated fleet: Prefix %q may not contain '*', '>', '..' or spaces (identities are NATS subject tokens)", c.Prefix)
	}
	if c.Prefix == "" {
		c.Prefix = "emulated-"
	}
	if c.Version == "" {
		c.Version = "0.30.0"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Connections <= 0 {
		c.Connections = 1
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.LockWindow <= 0 {
		c.LockWindow = 2 * time.Minute
	}
	if c.TimeScale <= 0 {
		c.TimeScale = 1
	}
	if c.BootTime <= 0 {
		c.BootTime = 500 * time.Millisecond
	}
	if c.CSRKeys <= 0 {
		c.CSRKeys = 4
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.TLS == nil {
		c.TLS = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // what provisioning-mode servers do
	} else {
		t := c.TLS.Clone()
		t.Certificates, t.GetClientCertificate = nil, nil
		c.TLS = t
	}
	return c, nil
}

// jwtAllowsUpdate reads the "update" claim of the provisioning JWT without verifying it (the
// broker verifies it; servers only read their build settings from it).
func jwtAllowsUpdate(token string) (bool, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false, fmt.Errorf("provisioning JWT: want 3 dot-separated parts, got %d", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false, fmt.Errorf("provisioning JWT payload: %w", err)
	}
	var claims struct {
		Update bool `json:"update"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return false, fmt.Errorf("provisioning JWT claims: %w", err)
	}
	return claims.Update, nil
}

// checkRelease mirrors go-updater's first step, with its messages: the release metadata must
// exist in the repository. Without CheckReleases only an empty repository or version fails.
func (f *Fleet) checkRelease(repo, version string) error {
	if !f.cfg.CheckReleases {
		switch {
		case repo == "":
			return fmt.Errorf("no repository given")
		case version == "":
			return fmt.Errorf("no version given")
		}
		return nil
	}
	specURI := fmt.Sprintf("%s/%s/%s/%s/release.json", repo, version, runtime.GOOS, runtime.GOARCH)
	resp, err := f.http.Get(specURI)
	if err != nil {
		return fmt.Errorf("could not download release spec: %s", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("could not fetch release from %s: %s", specURI, resp.Status)
	}
	return nil
}
