// Package localcluster runs a coordinator in this process: Serve opens its
// store, assembles it (coordinator.New), and serves gRPC (TLS optional) and
// HTTP (/metrics, /healthz, /readyz and optionally more pages) until Stop;
// Start adds N workers in the same process, each its own identity, talking
// gRPC over loopback exactly as separate machines would. `arbiter
// coordinator` is Serve, `arbiter up` is Start, and tests use both.
//
// Errors that refuse an input are cliexit errors with status 2; their text
// names the input as the command line spells it (--data, --listen, ...),
// since that is what the person typed.
package localcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/gamejob"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/auth"
	"github.com/arbiter-chess/arbiter/internal/cliexit"
	"github.com/arbiter-chess/arbiter/internal/obs"
)

// ServerConfig is a coordinator to serve. Unlike Config, zero values are
// not defaults: Serve refuses them where they make no sense.
type ServerConfig struct {
	// Listen is the gRPC address ("127.0.0.1:0": any free port).
	Listen string
	// Data is the data directory: the SQLite store's, and on either
	// backend the files beside the database (engine artifacts, datagen
	// shards).
	Data string
	// KindSettings are the settings of kinds that bring their own
	// coordinator flags (workload.Kind.Flags), by kind.
	KindSettings map[string]any
	// Store is the database ("": SQLite in Data; postgres://...: that
	// PostgreSQL database).
	Store string
	// Token is the bootstrap admin credential (required).
	Token string
	// HTTP is the address of /metrics, /healthz and /readyz ("": none).
	HTTP string
	// Pages, when set, makes what is served under "/" on HTTP besides
	// /metrics, /healthz and /readyz (the web pages: cmd/arbiter passes
	// web.New) from the assembled coordinator and its store. A handler
	// with a Close method is closed first when the server stops (it ends
	// live streams that would hold the HTTP shutdown).
	Pages func(*coordinator.Coordinator, *store.Store) (http.Handler, error)
	// VerifyDefault is the verify fraction of perft jobs that set none.
	VerifyDefault float64
	// ReplayFraction is the share of batches of fixed-node tests replayed
	// by another identity before they count (gamepair.Settings), and
	// DeterministicEngines the UCI engines declared deterministic there.
	ReplayFraction       float64
	DeterministicEngines []string
	// TLSCert and TLSKey serve TLS; TLSClientCA also asks workers for
	// client certificates signed by it (mTLS).
	TLSCert, TLSKey, TLSClientCA string
	// LeaseDuration is how long a lease lasts without a heartbeat.
	LeaseDuration time.Duration
	// UnitDuration is the target compute time of one perft unit.
	UnitDuration time.Duration
	// PGNRetention deletes the games of tests finished longer ago (0:
	// keep them).
	PGNRetention time.Duration
	// StartTimeout fails a test, tune or dataset no connected worker can start
	// after this long (0: grpcapi.DefaultStartTimeout).
	StartTimeout time.Duration
	// MaxWorkersPerIdentity bounds the worker ids one credential
	// registers (0: core.DefaultMaxWorkersPerIdentity).
	MaxWorkersPerIdentity int
	// Limits bound each non-admin identity (zero: none; the coordinator
	// command's flags default to quota.Defaults).
	Limits quota.Limits
	// PerftMaxNodes, PerftMaxHeldPositions and PerftMaxSplitPositions
	// bound perft jobs (0: the coordinator's defaults).
	PerftMaxNodes          float64
	PerftMaxHeldPositions  int
	PerftMaxSplitPositions int
	// UploadAbandonAfter removes artifact uploads idle this long (0:
	// artifacts.DefaultAbandonAfter).
	UploadAbandonAfter time.Duration
	// Git is how the coordinator fetches engines named by a remote git
	// URL (--git-credentials, --git-ssh-key, --git-allow-file,
	// --git-timeout).
	Git artifacts.GitConfig
	// API makes the JSON API's handler, served under APIPrefix on HTTP
	// (httpapi.ForCoordinator; nil: none).
	API func(*coordinator.Coordinator, *zap.Logger) http.Handler
	// Hooks is how webhooks are sent (--hook-allow, --public-url).
	Hooks coordinator.HooksConfig
	// Logger (nil: none).
	Logger *zap.Logger
	// Registry receives the coordinator's metrics and is served on
	// /metrics (nil: a new one); Start adds its workers' to it.
	Registry *prometheus.Registry
	// OnListening, when set, is told the gRPC address as soon as the
	// listener is open, before Serve returns.
	OnListening func(addr string)
}

// APIPrefix is where the JSON API is served (httpapi.Prefix).
const APIPrefix = "/api/v1"

// maxWorkersPerIdentity bounds --max-workers-per-identity: each worker
// is a few hundred bytes of the coordinator's memory and a row.
const maxWorkersPerIdentity = 1 << 20

// Validate checks the values that need no I/O.
func (c *ServerConfig) Validate() error {
	switch {
	case c.Token == "":
		return cliexit.Usage("no token: pass --token or set %s (nothing is open without one)", auth.EnvToken)
	case c.Store != "" && !store.IsPostgresURL(c.Store):
		return cliexit.Usage("--store: not a PostgreSQL URL: want postgres://user:password@host:port/database (or nothing for SQLite in --data)")
	case c.VerifyDefault < 0 || c.VerifyDefault > 1:
		return cliexit.Usage("--recheck-default %v: must be between 0 and 1", c.VerifyDefault)
	case !(c.ReplayFraction >= 0 && c.ReplayFraction <= 1):
		return cliexit.Usage("--replay-fraction %v: must be between 0 and 1", c.ReplayFraction)
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return cliexit.Usage("--tls-cert and --tls-key go together")
	case c.PGNRetention < 0:
		return cliexit.Usage("--pgn-retention %v: must not be negative", c.PGNRetention)
	case c.StartTimeout < 0:
		return cliexit.Usage("--start-timeout %v: must not be negative", c.StartTimeout)
	case c.LeaseDuration < 100*time.Millisecond:
		return cliexit.Usage("--lease-duration %v: must be at least 100ms", c.LeaseDuration)
	case c.UnitDuration <= 0:
		return cliexit.Usage("--unit-duration %v: must be positive", c.UnitDuration)
	case c.MaxWorkersPerIdentity < 0 || c.MaxWorkersPerIdentity > maxWorkersPerIdentity:
		return cliexit.Usage("--max-workers-per-identity %d: must be between 1 and %d", c.MaxWorkersPerIdentity, maxWorkersPerIdentity)
	case c.Git.Timeout < 0:
		return cliexit.Usage("--git-timeout %v: must not be negative", c.Git.Timeout)
	case c.UploadAbandonAfter < 0:
		return cliexit.Usage("--upload-abandon-after %v: must not be negative", c.UploadAbandonAfter)
	case c.PerftMaxNodes < 0 || math.IsNaN(c.PerftMaxNodes) || math.IsInf(c.PerftMaxNodes, 0):
		return cliexit.Usage("--perft-max-nodes %v: a positive number of leaves, e.g. 1e22", c.PerftMaxNodes)
	case c.PerftMaxHeldPositions < 0:
		return cliexit.Usage("--perft-max-held-positions %d: must be positive", c.PerftMaxHeldPositions)
	case c.PerftMaxSplitPositions < 0:
		return cliexit.Usage("--perft-max-split-positions %d: must be positive", c.PerftMaxSplitPositions)
	}
	if err := c.Limits.Validate(); err != nil {
		return cliexit.Usage("%v", err)
	}
	return nil
}

// Server is a coordinator serving on its listeners.
type Server struct {
	addr     string
	data     string
	c        *coordinator.Coordinator
	st       *store.Store
	grpc     *grpc.Server
	health   *health.Server
	http     *obs.Server
	pages    http.Handler
	api      http.Handler
	registry *prometheus.Registry
	log      *zap.Logger
	done     chan struct{}
	serving  atomic.Bool
	stopOnce sync.Once
}

// Serve opens the store in cfg.Data, assembles the coordinator and serves
// it until Stop.
func Serve(cfg ServerConfig) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	var tlsCfg *tls.Config
	if cfg.TLSCert != "" {
		var err error
		if tlsCfg, err = coordinator.LoadTLS(cfg.TLSCert, cfg.TLSKey, cfg.TLSClientCA); err != nil {
			return nil, cliexit.Usage("%v", err)
		}
	} else if cfg.TLSClientCA != "" {
		return nil, cliexit.Usage("--tls-client-ca needs --tls-cert and --tls-key")
	}
	st, err := store.OpenURL(cfg.Store, cfg.Data)
	if err != nil {
		if cfg.Store != "" {
			return nil, cliexit.Usage("--store: %s", strings.TrimPrefix(err.Error(), "store: "))
		}
		return nil, cliexit.Usage("--data: %v", err)
	}
	reg := cfg.Registry
	if reg == nil {
		reg = obs.NewRegistry()
	}
	c, err := coordinator.New(context.Background(), coordinator.Config{
		Store: st, Logger: log, Token: cfg.Token, LeaseDuration: cfg.LeaseDuration, TargetUnitDuration: cfg.UnitDuration,
		VerifyDefault: cfg.VerifyDefault, Registerer: reg, PGNRetention: cfg.PGNRetention, StartTimeout: cfg.StartTimeout,
		MaxWorkersPerIdentity: cfg.MaxWorkersPerIdentity,
		Limits:                cfg.Limits, UploadAbandonAfter: cfg.UploadAbandonAfter, PerftMaxNodes: cfg.PerftMaxNodes,
		PerftMaxHeldPositions: cfg.PerftMaxHeldPositions, PerftMaxSplitPositions: cfg.PerftMaxSplitPositions,
		KindSettings: cfg.KindSettings, Git: cfg.Git, Hooks: cfg.Hooks,
		Games: gamejob.Config{Settings: gamepair.Settings{ReplayFraction: cfg.ReplayFraction, DeterministicEngines: cfg.DeterministicEngines}},
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	srv, hs, err := c.NewGRPCServer(tlsCfg)
	if err != nil {
		c.Close()
		st.Close()
		return nil, err
	}
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		c.Close()
		st.Close()
		return nil, cliexit.Usage("--listen %s: %v", cfg.Listen, err)
	}
	s := &Server{addr: lis.Addr().String(), data: cfg.Data, c: c, st: st, grpc: srv, health: hs, registry: reg, log: log,
		done: make(chan struct{})}
	if cfg.HTTP != "" && cfg.API != nil {
		s.api = cfg.API(c, log)
	}
	if cfg.HTTP != "" && cfg.Pages != nil {
		if s.pages, err = cfg.Pages(c, st); err != nil {
			lis.Close()
			c.Close()
			st.Close()
			return nil, err
		}
	}
	if cfg.HTTP != "" {
		s.http, err = obs.Serve(cfg.HTTP, httpHandler(reg, s.Ready, s.pages, s.api), log)
		if err != nil {
			s.closePages()
			lis.Close()
			c.Close()
			st.Close()
			return nil, cliexit.Usage("--http %s: %v", cfg.HTTP, err)
		}
	}
	s.serving.Store(true)
	go func() {
		defer close(s.done)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Error("grpc serve", zap.Error(err))
		}
	}()
	log.Info("coordinator listening", zap.String("addr", s.addr), zap.String("data", cfg.Data),
		zap.String("store", string(st.Backend())+" "+st.Path()), zap.Bool("tls", tlsCfg != nil))
	if cfg.OnListening != nil {
		cfg.OnListening(s.addr)
	}
	return s, nil
}

// httpHandler serves /metrics, /healthz and /readyz, and pages under "/"
// when given: the health endpoints answer the same with or without pages.
func httpHandler(g prometheus.Gatherer, ready obs.ReadyFunc, pages, api http.Handler) http.Handler {
	base := coordinator.HTTPHandler(g, ready)
	if pages == nil && api == nil {
		return base
	}
	mux := http.NewServeMux()
	for _, p := range []string{"/metrics", "/healthz", "/readyz"} {
		mux.Handle(p, base)
	}
	if api != nil {
		mux.Handle(APIPrefix+"/", api)
	}
	if pages != nil {
		mux.Handle("/", pages)
	}
	return mux
}

func (s *Server) closePages() {
	if c, ok := s.pages.(interface{ Close() }); ok {
		c.Close()
	}
}

// Addr is the gRPC address the coordinator listens on.
func (s *Server) Addr() string { return s.addr }

// HTTPAddr is the HTTP address, or "" when HTTP is off.
func (s *Server) HTTPAddr() string {
	if s.http == nil {
		return ""
	}
	return s.http.Addr()
}

// Data is the store's directory.
func (s *Server) Data() string { return s.data }

// Coordinator is the assembled coordinator (its credentials, its core).
func (s *Server) Coordinator() *coordinator.Coordinator { return s.c }

// Registry is the registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Ready is /readyz: nil once the store is loaded and gRPC serves.
func (s *Server) Ready() error {
	if !s.serving.Load() {
		return errors.New("gRPC not serving")
	}
	return s.c.Ready()
}

// Stop shuts down: health NOT_SERVING, calls drained for up to five
// seconds, then the store closed. Stopping twice is harmless.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
		s.serving.Store(false)
		s.c.Close() // wakes long polls and watches
		stopped := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			s.grpc.Stop()
		}
		<-s.done
		s.closePages()
		s.http.Close()
		s.st.Close()
		s.log.Info("coordinator stopped")
		s.log.Sync()
	})
}
