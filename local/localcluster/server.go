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
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/base/obs"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/forward"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/grpcapi"
	"github.com/arbiter-chess/arbiter/coordinator/leader"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	_ "github.com/arbiter-chess/arbiter/kinds/install" // every kind of job: a farm in one process runs them all
	"github.com/arbiter-chess/arbiter/match"
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
	// Accounts sets the pages' accounts and the approval of tests.
	Accounts coordinator.AccountsConfig
	// VerifyDefault is the verify fraction of perft jobs that set none.
	VerifyDefault float64
	// Syzygy are the coordinator's tablebases for `arbiter up` (its
	// --syzygy): the replay of a batch checks its tablebase adjudications
	// against them (nil: none). `arbiter coordinator` gives its own through
	// the test kind's flags (kinds/test), whose settings take the place of
	// these.
	Syzygy match.TBProber
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
	// UploadAbandonAfter removes artifact uploads idle this long (0:
	// artifacts.DefaultAbandonAfter).
	UploadAbandonAfter time.Duration
	// Git is how the coordinator fetches engines named by a remote git
	// URL (--git-credentials, --git-ssh-key, --git-allow-file, --git-allow,
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
	// listener is open: before Serve returns, or when a follower takes
	// the lead.
	OnListening func(addr string)
	// LeaderTimeout, on a PostgreSQL store, is how long a leader may go
	// unconfirmed before another takes over (0: leader.DefaultTimeout).
	LeaderTimeout time.Duration
	// Advertise is the gRPC address a leader gives followers to name
	// ("": the listen address, with this host's name for an unspecified
	// host).
	Advertise string
	// ForwardMaxCalls caps the calls a follower relays to the leader at
	// once (0: forward.DefaultMaxCalls).
	ForwardMaxCalls int
	// ForwardCA names a PEM file of the CAs that a follower's TLS
	// connection to the leader trusts, besides the system's and the
	// certificates in TLSCert ("": those only).
	ForwardCA string
	// ForwardServerName is the name a follower checks the leader's
	// certificate for ("": the host of the leader's advertised address).
	ForwardServerName string
	// Admission is the byte budget, the hashing pool and the trusted
	// proxies of every door (--max-request-bytes,
	// --max-request-bytes-per-identity, --hash-workers, --hash-queue,
	// --trusted-proxy; zero: the defaults).
	Admission admission.Config
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
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return cliexit.Usage("--tls-cert and --tls-key go together")
	case c.PGNRetention < 0:
		return cliexit.Usage("--pgn-retention %v: must not be negative", c.PGNRetention)
	case c.StartTimeout < 0:
		return cliexit.Usage("--start-timeout %v: must not be negative", c.StartTimeout)
	case c.ForwardMaxCalls < 0:
		return cliexit.Usage("--forward-max-calls %d: must be at least 1", c.ForwardMaxCalls)
	case c.ForwardCA != "" && c.TLSCert == "":
		return cliexit.Usage("--forward-ca needs --tls-cert and --tls-key (it is for the TLS between coordinators)")
	case c.ForwardServerName != "" && c.TLSCert == "":
		return cliexit.Usage("--forward-server-name needs --tls-cert and --tls-key (it is for the TLS between coordinators)")
	case c.LeaderTimeout != 0 && c.LeaderTimeout < time.Second:
		return cliexit.Usage("--leader-timeout %v: must be at least 1s", c.LeaderTimeout)
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
	}
	if err := c.Limits.Validate(); err != nil {
		return cliexit.Usage("%v", err)
	}
	if err := c.Admission.Validate(); err != nil {
		return cliexit.Usage("%v", err)
	}
	return nil
}

// Server is a coordinator serving on its listeners. On a PostgreSQL
// store it is one of several: it runs the coordinator only while it leads
// (package coordinator/leader); following, it relays every gRPC call,
// page and JSON API request to the leader (package coordinator/forward)
// and serves /metrics, /healthz and a /readyz that names the leader
// itself.
type Server struct {
	cfg          ServerConfig
	data         string
	st           *store.Store
	tlsCfg       *tls.Config
	elector      *leader.Elector // nil on SQLite
	sole         *leader.Sole    // the election's series on SQLite (nil on PostgreSQL)
	http         *obs.Server
	handler      atomic.Pointer[http.Handler]
	registry     *prometheus.Registry
	log          *zap.Logger
	stopOnce     sync.Once
	lost         chan struct{} // closed when a leader lost the lead (or could not start serving)
	stopCampaign context.CancelFunc
	fwd          *forward.Forwarder // nil on SQLite

	mu      sync.Mutex // guards what becomeLeader sets
	addr    string
	c       *coordinator.Coordinator
	grpc    *grpc.Server
	fwdSrv  *grpc.Server  // the forwarding server while following
	fwdDone chan struct{} // closed when it stops serving
	health  *health.Server
	pages   http.Handler
	done    chan struct{} // closed when gRPC stops serving
	serving atomic.Bool
	stopped bool
}

// Serve opens the store in cfg.Data, assembles the coordinator and serves
// it until Stop. On a PostgreSQL store it first waits briefly for the
// lead; a coordinator that does not get it returns following (Leading
// false, Addr "") and starts serving when it takes over.
func Serve(cfg ServerConfig) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
		cfg.Logger = log
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
	s := &Server{cfg: cfg, data: cfg.Data, st: st, tlsCfg: tlsCfg, registry: reg, log: log, lost: make(chan struct{})}
	if st.Backend() == store.Postgres {
		s.elector, err = leader.New(leader.Config{Store: st, Timeout: cfg.LeaderTimeout, Logger: log, Registerer: reg})
		if err != nil {
			st.Close()
			return nil, cliexit.Usage("--leader-timeout: %v", err)
		}
		if s.fwd, err = s.newForwarder(); err != nil {
			s.closeElection()
			st.Close()
			return nil, err
		}
	} else {
		// Alone on its store, it leads; the HA series say so rather
		// than being absent (the dashboards' panels read them).
		s.sole = leader.NewSole(st.Ping, leader.DefaultTimeout/10, reg)
		forward.RegisterIdle(reg)
	}
	if cfg.HTTP != "" {
		var relay http.Handler
		if s.fwd != nil {
			relay = s.fwd.HTTP(s.followerUnavailable)
		}
		s.setHandler(httpHandler(reg, s.Ready, relay, relay))
		s.http, err = obs.Serve(cfg.HTTP, http.HandlerFunc(s.serveHTTP), log)
		if err != nil {
			s.closeElection()
			st.Close()
			return nil, cliexit.Usage("--http %s: %v", cfg.HTTP, err)
		}
	}
	if s.elector == nil {
		if err := s.becomeLeader(); err != nil {
			s.closeElection()
			s.http.Close()
			st.Close()
			return nil, err
		}
		return s, nil
	}
	// A coordinator alone, or restarted in place, finds the lock free at
	// its first check (the server ended the dead one's session): wait for
	// that check, however slow the database, before saying we follow.
	select {
	case <-s.elector.Checked():
	case <-time.After(time.Minute):
	}
	if s.elector.Status().Role == leader.Leading {
		if err := s.becomeLeader(); err != nil {
			s.closeElection()
			s.http.Close()
			st.Close()
			return nil, err
		}
		go s.watchLead()
		return s, nil
	}
	if err := s.startForwarding(); err != nil {
		s.closeElection()
		s.http.Close()
		st.Close()
		return nil, err
	}
	st0 := s.elector.Status()
	log.Info("coordinator following: forwarding to the leader", zap.String("addr", s.Addr()), zap.String("leader", st0.Leader), zap.String("leader_grpc", st0.LeaderGRPC),
		zap.Int64("term", st0.Term), zap.String("store", string(st.Backend())+" "+st.Path()))
	ctx, stop := context.WithCancel(context.Background())
	s.stopCampaign = stop
	go func() {
		if _, err := s.elector.Campaign(ctx); err != nil {
			return
		}
		// The takeover is a restart of serving: calls being relayed end
		// Unavailable (clients retry) and the port serves the
		// coordinator itself once the store is loaded.
		s.stopForwarding()
		if err := s.becomeLeader(); err != nil {
			log.Error("coordinator took the lead but cannot serve", zap.Error(err))
			s.loseLead()
			return
		}
		s.watchLead()
	}()
	return s, nil
}

// becomeLeader loads the store, assembles the coordinator and serves gRPC
// and the full pages.
func (s *Server) becomeLeader() error {
	cfg, st, log := s.cfg, s.st, s.log
	c, err := coordinator.New(context.Background(), coordinator.Config{
		Store: st, Logger: log, Token: cfg.Token, LeaseDuration: cfg.LeaseDuration, TargetUnitDuration: cfg.UnitDuration,
		VerifyDefault: cfg.VerifyDefault, Registerer: s.registry, PGNRetention: cfg.PGNRetention, StartTimeout: cfg.StartTimeout,
		MaxWorkersPerIdentity: cfg.MaxWorkersPerIdentity,
		Limits:                cfg.Limits, UploadAbandonAfter: cfg.UploadAbandonAfter,
		KindSettings: cfg.KindSettings, Accounts: cfg.Accounts, Git: cfg.Git, Hooks: cfg.Hooks, Admission: cfg.Admission,
		Games: gamepair.Settings{Syzygy: cfg.Syzygy},
	})
	if err != nil {
		return err
	}
	srv, hs, err := c.NewGRPCServer(s.tlsCfg)
	if err != nil {
		c.Close()
		return err
	}
	// A follower that took over serves where it relayed: with --listen
	// on port 0, on the port it was given then.
	listen := cfg.Listen
	s.mu.Lock()
	if host, port, err := net.SplitHostPort(cfg.Listen); err == nil && port == "0" && s.addr != "" {
		if _, p, err := net.SplitHostPort(s.addr); err == nil {
			listen = net.JoinHostPort(host, p)
		}
	}
	s.mu.Unlock()
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		c.Close()
		return cliexit.Usage("--listen %s: %v", listen, err)
	}
	var pages, api http.Handler
	if cfg.HTTP != "" && cfg.API != nil {
		api = cfg.API(c, log)
	}
	if cfg.HTTP != "" && cfg.Pages != nil {
		if pages, err = cfg.Pages(c, st); err != nil {
			lis.Close()
			c.Close()
			return err
		}
	}
	s.mu.Lock()
	s.addr, s.c, s.grpc, s.health, s.pages, s.done = lis.Addr().String(), c, srv, hs, pages, make(chan struct{})
	s.mu.Unlock()
	if cfg.HTTP != "" {
		s.setHandler(forward.Trust(c.Forwarded(), httpHandler(s.registry, s.Ready, pages, api)))
	}
	s.serving.Store(true)
	done := s.done
	go func() {
		defer close(done)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Error("grpc serve", zap.Error(err))
		}
	}()
	fields := []zap.Field{zap.String("addr", s.addr), zap.String("data", cfg.Data),
		zap.String("store", string(st.Backend())+" "+st.Path()), zap.Bool("tls", s.tlsCfg != nil)}
	if s.elector != nil {
		fields = append(fields, zap.Int64("term", s.elector.Status().Term))
		if err := s.elector.Advertise(context.Background(), s.advertised(), s.advertisedHTTP()); err != nil {
			log.Warn("leader address not recorded", zap.Error(err))
		}
	}
	log.Info("coordinator listening", fields...)
	if cfg.OnListening != nil {
		cfg.OnListening(s.addr)
	}
	return nil
}

// advertised is the gRPC address followers name: --advertise, else the
// listen address with this host's name for an unspecified host.
func (s *Server) advertised() string {
	if s.cfg.Advertise != "" {
		return s.cfg.Advertise
	}
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return s.addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return net.JoinHostPort(host, port)
}

// advertisedHTTP is the pages' address followers name: the advertised
// gRPC host with the HTTP port ("" without HTTP).
func (s *Server) advertisedHTTP() string {
	if s.http == nil {
		return ""
	}
	host, _, err1 := net.SplitHostPort(s.advertised())
	_, port, err2 := net.SplitHostPort(s.HTTPAddr())
	if err1 != nil || err2 != nil {
		return s.HTTPAddr()
	}
	return net.JoinHostPort(host, port)
}

// watchLead stops serving when the lead is lost.
func (s *Server) watchLead() {
	<-s.elector.Lost()
	s.loseLead()
}

// loseLead stops gRPC at once (connections close, so clients move to the
// next address) and tells Lost.
func (s *Server) loseLead() {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if !stopped {
		s.log.Error("coordinator lost the lead: gRPC stopped; restart this process to follow again")
		s.stopServing(0)
	}
	select {
	case <-s.lost:
	default:
		close(s.lost)
	}
}

// Lost is closed when this coordinator, having led, lost the lead: it no
// longer serves and its process should exit (a supervisor restarts it as
// a follower).
func (s *Server) Lost() <-chan struct{} { return s.lost }

// Leading reports whether this coordinator serves gRPC now.
func (s *Server) Leading() bool { return s.serving.Load() }

// Election is the election's state (Role "" on SQLite: the only one).
func (s *Server) Election() leader.Status {
	if s.elector == nil {
		return leader.Status{Role: leader.Leading}
	}
	return s.elector.Status()
}

func (s *Server) setHandler(h http.Handler) { s.handler.Store(&h) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.handler.Load()).ServeHTTP(w, r)
}

// followerUnavailable answers a page or API request a follower cannot
// relay (no leader serving, or it did not answer): 503, naming the leader.
func (s *Server) followerUnavailable(w http.ResponseWriter, r *http.Request, why error) {
	st := s.Election()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Retry-After", "5")
	if st.LeaderHTTP != "" {
		w.Header().Set("Link", "<http://"+st.LeaderHTTP+r.URL.RequestURI()+">; rel=\"alternate\"")
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintf(w, "this coordinator follows (%s) and relays to the leader, but cannot now: %v\n", describeElection(st), why)
}

// newForwarder is the follower's relay to the leader, with the gRPC
// server's own limits.
func (s *Server) newForwarder() (*forward.Forwarder, error) {
	signer, err := forward.LoadSigner(context.Background(), s.st)
	if err != nil {
		return nil, err
	}
	// The follower's own admission (its metrics unregistered: the
	// coordinator it may become registers its own).
	adm, err := admission.New(s.cfg.Admission, nil)
	if err != nil {
		return nil, cliexit.Usage("%v", err)
	}
	var clientTLS *tls.Config
	if s.tlsCfg != nil {
		if clientTLS, err = forwardTLS(s.cfg.TLSCert, s.cfg.ForwardCA); err != nil {
			return nil, err
		}
		clientTLS.ServerName = s.cfg.ForwardServerName
	}
	return forward.New(forward.Config{
		Leader: func() forward.Leader {
			st := s.elector.Status()
			if st.Role != leader.Follower {
				return forward.Leader{}
			}
			return forward.Leader{GRPC: st.LeaderGRPC, HTTP: st.LeaderHTTP, Term: st.Term}
		},
		Signer: signer, TLS: clientTLS, MaxCalls: s.cfg.ForwardMaxCalls, Admission: adm,
		MaxRecvMsgBytes: grpcapi.MaxRecvMsgBytes, MaxSendMsgBytes: grpcapi.MaxSendMsgBytes, MaxConcurrentStreams: grpcapi.MaxConcurrentStreams,
		Logger: s.log, Registerer: s.registry,
	}), nil
}

// forwardTLS is the client side of a follower's TLS to the leader: it
// trusts the system's roots, the certificates of certFile (coordinators
// sharing one self-signed certificate, or one whose chain is in the file)
// and those of caFile.
func forwardTLS(certFile, caFile string) (*tls.Config, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range []struct{ flag, path string }{{"--tls-cert", certFile}, {"--forward-ca", caFile}} {
		if f.path == "" {
			continue
		}
		pem, err := os.ReadFile(f.path)
		if err != nil {
			return nil, cliexit.Usage("%s: %v", f.flag, err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, cliexit.Usage("%s %s: no PEM certificate in it", f.flag, f.path)
		}
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// startForwarding serves the relay on the gRPC port while following.
func (s *Server) startForwarding() error {
	lis, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return cliexit.Usage("--listen %s: %v", s.cfg.Listen, err)
	}
	srv := s.fwd.NewServer(s.tlsCfg)
	done := make(chan struct{})
	s.mu.Lock()
	s.addr, s.fwdSrv, s.fwdDone = lis.Addr().String(), srv, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.log.Error("grpc forward serve", zap.Error(err))
		}
	}()
	if s.cfg.OnListening != nil {
		s.cfg.OnListening(s.addr)
	}
	return nil
}

// stopForwarding stops relaying: its connections close (calls in flight
// end Unavailable) and the port is free again.
func (s *Server) stopForwarding() {
	s.mu.Lock()
	srv, done := s.fwdSrv, s.fwdDone
	s.fwdSrv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Stop()
		<-done
	}
	if s.fwd != nil {
		s.fwd.Close()
	}
}

// describeElection is one line for /readyz and follower pages.
func describeElection(st leader.Status) string {
	var b strings.Builder
	b.WriteString(string(st.Role))
	if st.Term > 0 {
		fmt.Fprintf(&b, ", term %d", st.Term)
	}
	if st.Role != leader.Leading && st.Leader != "" {
		fmt.Fprintf(&b, ", leader %s", st.Leader)
		if st.LeaderGRPC != "" {
			fmt.Fprintf(&b, " (grpc %s", st.LeaderGRPC)
			if st.LeaderHTTP != "" {
				fmt.Fprintf(&b, ", http %s", st.LeaderHTTP)
			}
			b.WriteString(")")
		}
	}
	if st.DBErr != nil {
		fmt.Fprintf(&b, "; database unreachable: %v", st.DBErr)
	} else {
		b.WriteString("; database reachable")
	}
	return b.String()
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
	s.mu.Lock()
	pages := s.pages
	s.mu.Unlock()
	if c, ok := pages.(interface{ Close() }); ok {
		c.Close()
	}
}

// Addr is the gRPC address the coordinator listens on (while it follows,
// the address it relays calls to the leader on).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// HTTPAddr is the HTTP address, or "" when HTTP is off.
func (s *Server) HTTPAddr() string {
	if s.http == nil {
		return ""
	}
	return s.http.Addr()
}

// Data is the store's directory.
func (s *Server) Data() string { return s.data }

// Coordinator is the assembled coordinator (its credentials, its core);
// nil while following.
func (s *Server) Coordinator() *coordinator.Coordinator {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// Registry is the registry /metrics serves.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Ready is /readyz: nil once the store is loaded and gRPC serves. On
// PostgreSQL, with the database answering: a leader while it serves, a
// follower while the leader answers it (it serves everything by relaying
// to the leader). Its error, and with several coordinators its success
// too, names the role.
func (s *Server) Ready() error {
	if s.elector != nil {
		st := s.elector.Status()
		switch {
		case st.DBErr != nil:
			return errors.New(describeElection(st))
		case st.Role == leader.Leading && s.serving.Load():
			return readyAs(describeElection(st))
		case st.Role == leader.Follower && st.LeaderGRPC != "":
			// Within a Kubernetes probe's 2 s.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := s.fwd.Probe(ctx); err != nil {
				return fmt.Errorf("%s; the leader does not answer: %v", describeElection(st), err)
			}
			return readyAs(describeElection(st) + "; forwarding to the leader")
		}
		return errors.New(describeElection(st))
	}
	if !s.serving.Load() {
		return errors.New("gRPC not serving")
	}
	return s.Coordinator().Ready()
}

// readyAs is a success that says more than "ready" (obs.Ready).
func readyAs(what string) error { return obs.Ready(what) }

// stopServing stops gRPC (draining calls for up to drain) and the
// coordinator. Stopping twice is harmless.
func (s *Server) stopServing(drain time.Duration) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	c, srv, hs, done := s.c, s.grpc, s.health, s.done
	s.mu.Unlock()
	s.serving.Store(false)
	if c == nil {
		return
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	c.Close() // wakes long polls and watches
	if drain > 0 {
		stopped := make(chan struct{})
		go func() { srv.GracefulStop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(drain):
			srv.Stop()
		}
	} else {
		srv.Stop()
	}
	<-done
}

func (s *Server) closeElection() {
	if s.stopCampaign != nil {
		s.stopCampaign()
	}
	if s.elector != nil {
		s.elector.Close()
	}
	if s.sole != nil {
		s.sole.Close()
	}
}

// Stop shuts down: health NOT_SERVING, calls drained for up to five
// seconds, the lead given up, then the store closed. Stopping twice is
// harmless.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.stopForwarding()
		s.stopServing(5 * time.Second)
		s.closePages()
		s.http.Close()
		// The lead is given up only once nothing of ours can write.
		s.closeElection()
		s.st.Close()
		s.log.Info("coordinator stopped")
		s.log.Sync()
	})
}
