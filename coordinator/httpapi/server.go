// SPDX-License-Identifier: Apache-2.0

package httpapi

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed96588659/muster/pkg/api"
)

// DefaultMaxBodyBytes bounds a request body when the configuration does not.
const DefaultMaxBodyBytes = 1 << 20

// Event stream bounds when the configuration sets none: streams served at once, and how long
// one write of an event (or a keep-alive) may wait for a reader that does not read.
const (
	DefaultMaxEventReaders   = 256
	DefaultEventWriteTimeout = 10 * time.Second
)

// Config holds what the HTTP layer needs besides the service.
type Config struct {
	// Edges binds each edge credential to the one edge name and the regions it may act for: a
	// request naming another edge, a region not listed or a lease another edge holds is refused
	// with 403 and changes nothing.
	Edges []EdgeCredential
	// EdgeTokens open the edge API for any edge name and region (unbound; kept for existing
	// configurations, prefer Edges).
	EdgeTokens []string
	// AdminTokens open the whole admin API, each as the admin named admin (auth.admin_token);
	// with neither these nor Admins nor Readers the admin API answers 403.
	AdminTokens []string
	// Admins are the named admins (auth.admins): each opens the admin calls its role allows, and
	// its name is what the audit and the history record of its writes.
	Admins []AdminCredential
	// ClientCerts accepts edge requests whose TLS client certificate the server verified against
	// its CA. A certificate whose common name is the Edge of an Edges entry without a Token is
	// bound to that entry; once any entry exists, a certificate bound to none acts as no edge
	// (a member's forward excepted), and only with no entry at all does any verified certificate
	// but a reader's act as any edge.
	ClientCerts bool
	// Readers are the common names of verified client certificates that may use the admin reads
	// (status, nodes, node, failures, events) without the admin token, for the status page: each
	// is an admin of role read. A certificate bound to an edge never reads, and no admin's
	// certificate acts as an edge.
	Readers []string
	// MemberName, when set, is the DNS name a member's certificate carries: a forward proof lets a
	// certificate bound to no edge act as any edge only when it carries it (tls.member_name).
	MemberName string
	// Insecure opens the edge API without a credential; only for local experiments.
	Insecure bool
	// MaxBodyBytes bounds every request body (DefaultMaxBodyBytes when 0).
	MaxBodyBytes int64
	// Redirect answers 421 with the leader's address instead of forwarding a follower's request.
	Redirect bool
	// Profiling serves this member's CPU and heap profiles to the admin token (http.profiling).
	Profiling bool
	// Self is this member's own API base URL: a request is never forwarded to it.
	Self string
	// ForwardClient sends forwarded requests to the leader (TLS settings of the member); nil uses a plain client.
	ForwardClient *http.Client
	// Errors maps the service's sentinel errors to HTTP answers (the member's table:
	// coordinator.HTTPErrors); an error none matches is answered 500. Required.
	Errors []api.ErrorMapping
	// Logger receives one line per failed request; tokens never reach it.
	Logger *slog.Logger
	// Registry receives the HTTP metrics; nil registers nothing.
	Registry prometheus.Registerer
	// MaxEventReaders caps the event streams served at once (http.max_event_readers); one more
	// is refused with 503 naming the cap. DefaultMaxEventReaders when 0.
	MaxEventReaders int
	// EventWriteTimeout is how long one write to an event stream may take before the stream is
	// cut and its place freed (http.event_write_timeout). DefaultEventWriteTimeout when 0.
	EventWriteTimeout time.Duration
}

// Server serves the edge and admin APIs of one coordinator member.
type Server struct {
	svc         Service
	edges       []boundSecret
	certEdges   map[string]binding
	edgeTokens  []secret
	admins      []namedSecret
	certAdmins  map[string]api.Role // admins and readers by their certificate's common name
	proofs      []string            // forward proofs derived from the admin tokens (member.go)
	clientCerts bool
	memberName  string
	insecure    bool
	maxBody     int64
	redirect    bool
	profiling   bool
	self        string
	fwd         *http.Client
	errors      []api.ErrorMapping
	log         *slog.Logger
	metrics     *metrics
	mux         *http.ServeMux
	// eventSlots holds one token per event stream served now (cap MaxEventReaders).
	eventSlots   chan struct{}
	eventTimeout time.Duration
}

// New builds a server for svc; it refuses a configuration that leaves the edge API open by accident.
func New(svc Service, cfg Config) (*Server, error) {
	if svc == nil {
		return nil, errors.New("httpapi: nil service")
	}
	if len(cfg.EdgeTokens) == 0 && len(cfg.Edges) == 0 && !cfg.ClientCerts && !cfg.Insecure {
		return nil, errors.New("httpapi: no edge credential configured (edge tokens or client certificates), and insecure is not set")
	}
	s := &Server{
		svc:         svc,
		clientCerts: cfg.ClientCerts,
		memberName:  cfg.MemberName,
		insecure:    cfg.Insecure,
		maxBody:     cfg.MaxBodyBytes,
		redirect:    cfg.Redirect,
		profiling:   cfg.Profiling,
		self:        strings.TrimRight(cfg.Self, "/"),
		fwd:         cfg.ForwardClient,
		errors:      cfg.Errors,
		log:         cfg.Logger,
	}
	if err := s.bindEdges(cfg.Edges); err != nil {
		return nil, err
	}
	for _, t := range cfg.EdgeTokens {
		if t == "" {
			return nil, errors.New("httpapi: an edge token is empty")
		}
		s.edgeTokens = append(s.edgeTokens, newSecret(t))
	}
	if err := s.bindAdmins(cfg.AdminTokens, cfg.Admins, cfg.Readers); err != nil {
		return nil, err
	}
	if len(s.errors) == 0 {
		// Without it every refusal (not leader, unknown lease) would read as a server fault.
		return nil, errors.New("httpapi: no error mapping configured (Errors)")
	}
	s.proofs = forwardProofs(cfg.AdminTokens)
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if cfg.MaxEventReaders < 0 || cfg.EventWriteTimeout < 0 {
		return nil, fmt.Errorf("httpapi: MaxEventReaders %d and EventWriteTimeout %s must not be negative", cfg.MaxEventReaders, cfg.EventWriteTimeout)
	}
	s.eventSlots = make(chan struct{}, cmp.Or(cfg.MaxEventReaders, DefaultMaxEventReaders))
	s.eventTimeout = cmp.Or(cfg.EventWriteTimeout, DefaultEventWriteTimeout)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.fwd == nil {
		s.fwd = &http.Client{}
	}
	// The forwarded answer goes back as it is, redirects included.
	fwd := *s.fwd
	fwd.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s.fwd = &fwd
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	s.routes()
	return s, nil
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.handle(api.PathRegister, s.register())
	s.handle(api.PathAcquire, s.acquire())
	s.handle(api.PathRenew, s.renew())
	s.handle(api.PathReport, s.report())
	s.handle(api.PathHeartbeat, s.heartbeat())
	s.handle(api.PathStatus, s.status())
	s.handle(api.PathNodes, s.nodes())
	s.handle(api.PathNode+"{identity}", s.node())
	s.handle(api.PathPause, s.pause())
	s.handle(api.PathResume, s.resume())
	s.handle(api.PathJoin, s.join())
	s.handle(api.PathRemove, s.remove())
	s.handle(api.PathSnapshot, s.snapshot())
	s.handle(api.PathRetry, s.retry())
	s.handle(api.PathOperator, s.operate())
	s.handle(api.PathEvents, s.events())
	s.handle(api.PathFailures, s.failures())
	s.handle(api.PathProfileCPU, s.profileCPU())
	s.handle(api.PathProfileHeap, s.profileHeap())
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, api.CodeNotFound, "no such endpoint: "+r.URL.Path, "")
	})
}

// handle registers h under pattern with the leader header, metrics and a log line per failure.
func (s *Server) handle(pattern string, h http.Handler) {
	route := pattern
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if l := s.svc.LeaderAPIAddress(); l != "" {
			w.Header().Set(api.HeaderLeader, l)
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		s.metrics.observe(route, sw.status, time.Since(start))
		if sw.status >= 400 {
			// Method, path and status only: headers carry the credentials.
			s.log.Info("api request refused", "method", r.Method, "path", r.URL.Path, "status", sw.status, "remote", r.RemoteAddr)
		}
	}))
}

// statusWriter remembers the status for metrics and logs.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
