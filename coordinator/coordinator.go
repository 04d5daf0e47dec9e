// Package coordinator assembles the cluster's coordinator: the core
// (package core: workers, leases, scheduling, the one check of a result
// against its lease), a workload for every kind of job registered with
// package workload (kinds.go: perft jobs, game-pair tests, SPSA tunes,
// verify sessions, datasets), the credentials, and the gRPC face (package
// grpcapi). It holds no state of its own; cmd/arbiter and the tests build
// coordinators through it.
package coordinator

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/obs"
	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/coordinator/accounts"
	"github.com/arbiter-chess/arbiter/coordinator/admission"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/credentials"
	"github.com/arbiter-chess/arbiter/coordinator/forward"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/grpcapi"
	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
)

// DefaultStartTimeout is how long a test, tune or dataset that no
// connected worker can start waits before it ends failed
// (Config.StartTimeout).
const DefaultStartTimeout = grpcapi.DefaultStartTimeout

// Config tunes a coordinator. Zero values take the defaults.
type Config struct {
	Store  *store.Store
	Logger *zap.Logger
	// Token is the bootstrap admin credential (required).
	Token string
	// LeaseDuration is how long a lease lasts without a heartbeat (30s).
	LeaseDuration time.Duration
	// TargetUnitDuration is the work one unit should take (2s; perft's,
	// workload.Deps.UnitDuration).
	TargetUnitDuration time.Duration
	// VerifyDefault is the recheck fraction of jobs that set none
	// (perft's, workload.Deps.RecheckDefault).
	VerifyDefault float64
	// Games tunes match and SPRT tests: the test kind's settings
	// (kinds/test) for a program that embeds the coordinator; the
	// command's flags give them in KindSettings, which win.
	Games gamepair.Settings
	// KindSettings are the settings of kinds that bring their own flags
	// (workload.Kind.Flags), by kind.
	KindSettings map[string]any
	// PGNRetention deletes the games of tests and tunes finished longer ago
	// than this (their counts, verdict and updates stay); 0 keeps them forever.
	// Stored games are gzip-compressed either way.
	PGNRetention time.Duration
	// StartTimeout is how long a job that no connected worker can start
	// (of the kinds that ask it: tests, tunes, datasets) waits before it
	// ends failed with the reason
	// (grpcapi.DefaultStartTimeout).
	StartTimeout time.Duration
	// ArtifactMaxBytes caps one uploaded engine artifact
	// (artifacts.DefaultMaxBytes).
	ArtifactMaxBytes int64
	// MaxWorkersPerIdentity bounds the worker ids one credential registers
	// (core.DefaultMaxWorkersPerIdentity).
	MaxWorkersPerIdentity int
	// UploadAbandonAfter is how long an artifact upload may sit idle
	// before its partial file is removed (artifacts.DefaultAbandonAfter).
	UploadAbandonAfter time.Duration
	// Hooks is how webhooks are sent.
	Hooks HooksConfig
	// Git is how engines named by a remote git URL are fetched
	// (artifacts.GitConfig; its Dir defaults to the artifacts' git/).
	Git artifacts.GitConfig
	// Limits bound each non-admin identity (connections, calls, submits,
	// uploads, artifacts); the zero value limits nothing (the command's
	// flags default to quota.Defaults).
	Limits quota.Limits
	// Accounts sets the web pages' accounts and the approval of tests.
	Accounts AccountsConfig
	// Admission is how every door admits requests before reading their
	// bodies: the byte budget, the password-hashing pool, the trusted
	// proxies (zero: the defaults, no proxy trusted).
	Admission admission.Config
	// Now is the clock (time.Now).
	Now func() time.Time
	// Registerer receives every metric; nil registers none.
	Registerer prometheus.Registerer
}

// AccountsConfig sets accounts and approvals (docs/web.md).
type AccountsConfig struct {
	// SignUp opens the sign-up page; new accounts wait for an admin.
	SignUp bool
	// Approval: tests and tunes of accounts with role user wait for an
	// approver.
	Approval bool
	// CrossApproval: nobody approves their own test.
	CrossApproval bool
	// SessionTTL is how long a web session lasts (7 days).
	SessionTTL time.Duration
}

// Coordinator is an assembled coordinator.
type Coordinator struct {
	Core        *core.Core
	Credentials *credentials.Manager
	// Trust is every worker identity's trust (gamepair/trust.go), for the
	// pages.
	Trust *gamepair.Trust
	// Accounts are the web pages' accounts and the approval rule.
	Accounts *accounts.Service
	// Admission is the one admission of every door (gRPC, the JSON API,
	// the web forms, sign-in and sign-up).
	Admission *admission.Admission
	// Artifacts keeps the uploaded engines (files under the data
	// directory's artifacts/).
	Artifacts *artifacts.Store
	// Workloads are the workloads of the kinds registered with package
	// workload, by kind (the typed accessors of kinds.go look them up).
	Workloads map[string]core.Workload
	// workloads is every workload, in the order the core asks them.
	workloads []core.Workload

	// Hooks keeps the webhooks and sends their events.
	Hooks *hooks.Manager

	cfg         Config
	gate        *quota.Gate
	inprocOnce  sync.Once
	inproc      *grpc.ClientConn
	inprocSrv   *grpc.Server
	inprocErr   error
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	quarantined int
	forwarded   *forward.Signer
}

// leaseKeyName is the meta key of the lease-signing key.
const leaseKeyName = "lease_key"

// New loads the store and starts the lease-expiry loop.
func New(ctx context.Context, cfg Config) (*Coordinator, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("coordinator: no store")
	}
	if cfg.Token == "" {
		return nil, fmt.Errorf("coordinator: a bootstrap admin token is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	key, err := leaseKey(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	creds, err := credentials.New(ctx, cfg.Store, cfg.Token, cfg.Now)
	if err != nil {
		return nil, err
	}
	forwarded, err := forward.LoadSigner(ctx, cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	// One games counter for every workload that plays games.
	games := gamepair.NewGameCounter()
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(games.Vec())
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	adm, err := admission.New(cfg.Admission, cfg.Registerer)
	if err != nil {
		return nil, err
	}
	c := &Coordinator{Credentials: creds, cfg: cfg, gate: quota.NewGate(cfg.Limits, cfg.Now), Workloads: make(map[string]core.Workload),
		forwarded: forwarded, Admission: adm}
	c.Artifacts, err = artifacts.New(ctx, artifacts.Config{Store: cfg.Store, Dir: filepath.Join(cfg.Store.Dir(), "artifacts"),
		MaxBytes: cfg.ArtifactMaxBytes, Logger: cfg.Logger, Now: cfg.Now, Registerer: cfg.Registerer,
		AbandonAfter: cfg.UploadAbandonAfter, MaxUploadsPerIdentity: cfg.Limits.Uploads, MaxArtifactsPerIdentity: cfg.Limits.Artifacts,
		MaxDiskBytesPerIdentity: cfg.Limits.DiskBytes, InUse: c.usingArtifact, Git: cfg.Git})
	if err != nil {
		return nil, err
	}
	// Trust between worker identities: stored, shared by the game
	// workloads; an identity an admin made is vouched for.
	trust, err := gamepair.NewTrust(ctx, cfg.Store, creds.Vouched, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("coordinator: trust: %w", err)
	}
	c.Trust = trust
	c.Accounts, err = accounts.New(accounts.Config{Store: cfg.Store, Now: cfg.Now, Logger: cfg.Logger, SessionTTL: cfg.Accounts.SessionTTL,
		Approval: cfg.Accounts.Approval, CrossApproval: cfg.Accounts.CrossApproval, SignUp: cfg.Accounts.SignUp, Hashing: adm.Hashing})
	if err != nil {
		return nil, err
	}
	// One approval rule, read from each kind's registration, for the core
	// and for the kinds that start sessions outside it.
	approvals := c.Accounts.Gate(workload.RunsSubmittedCode)
	if err := c.newWorkloads(approvals, games, trust); err != nil {
		return nil, err
	}
	// An account's tokens stop with it, however it was disabled.
	creds.SetOwnerCheck(c.Accounts.Active)
	c.Core = core.New(core.Config{Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Now, LeaseDuration: cfg.LeaseDuration,
		LeaseKey: key, Registerer: cfg.Registerer, MaxWorkersPerIdentity: cfg.MaxWorkersPerIdentity, Quota: c.gate,
		Approvals: approvals, Auditor: cfg.Store}, c.workloads...)
	for _, wl := range c.workloads {
		if h, ok := wl.(interface{ SetHost(core.Host) }); ok {
			h.SetHost(c.Core.Host())
		}
	}
	if err := c.Core.Load(ctx); err != nil {
		return nil, err
	}
	c.quarantine(ctx)
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// newWorkloads makes one workload of every registered kind, each with
// its settings from the flags (Config.KindSettings) and what the
// coordinator shares with it.
func (c *Coordinator) newWorkloads(approvals core.Approvals, games *gamepair.GameCounter, trust *gamepair.Trust) error {
	cfg := c.cfg
	deps := workload.Deps{Store: cfg.Store, Approvals: approvals, Logger: cfg.Logger, Now: cfg.Now, Registerer: cfg.Registerer, DataDir: cfg.Store.Dir(),
		ResolveArtifact: c.Artifacts.FillEngine, Games: games, Trust: trust, ReferenceNPS: cfg.Games.ReferenceNPS,
		UnitDuration: cfg.TargetUnitDuration, RecheckDefault: cfg.VerifyDefault,
		// And one record of the workers' recent games (the /workers page).
		Activity:  gamepair.NewActivity(cfg.Now),
		JobExists: func(id string) bool { _, ok := c.Core.JobRef(id); return ok },
		Workload:  c.Workload}
	settings := cfg.kindSettings()
	for _, k := range workload.Kinds() {
		deps.Settings = settings[k.Name]
		wl, err := k.New(deps)
		if err != nil {
			return fmt.Errorf("coordinator: %s workload: %w", k.Name, err)
		}
		c.Workloads[k.Name] = wl
		c.workloads = append(c.workloads, wl)
	}
	return nil
}

// start runs the core and the coordinator's background loops (the stall
// watch, the artifact sweeper, webhooks, PGN retention, session expiry)
// until Close.
func (c *Coordinator) start(ctx context.Context) error {
	cfg := c.cfg
	runCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.Core.Run(runCtx)
	}()
	stalls := grpcapi.NewStallWatch(c.Core, c.workloads, cfg.StartTimeout, cfg.Logger)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		stalls.Run(runCtx)
	}()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.Artifacts.RunSweeper(runCtx)
	}()
	if err := c.startHooks(ctx, runCtx); err != nil {
		cancel()
		c.wg.Wait()
		return fmt.Errorf("coordinator: webhooks: %w", err)
	}
	if cfg.PGNRetention > 0 {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.retain(runCtx)
		}()
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.expireSessions(runCtx)
	}()
	return nil
}

// expireSessions deletes the web sessions that expired, hourly: an
// expired session already reads as signed out, this only keeps the
// table small.
func (c *Coordinator) expireSessions(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := c.Accounts.ExpireSessions(ctx); err != nil && ctx.Err() == nil {
			c.cfg.Logger.Warn("expired sessions not deleted", zap.Error(err))
		} else if n > 0 {
			c.cfg.Logger.Info("expired sessions deleted", zap.Int64("sessions", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// quarantine records and reports the stored records the workloads could
// not load: they are not served, everything else is.
func (c *Coordinator) quarantine(ctx context.Context) {
	var qs []store.Quarantined
	for _, wl := range c.workloads {
		if q, ok := wl.(workload.Quarantiner); ok {
			qs = append(qs, q.Quarantined()...)
		}
	}
	for _, q := range qs {
		q.At = c.cfg.Now()
		c.cfg.Logger.Error("stored record quarantined: not served until repaired", zap.String("kind", q.Kind),
			zap.String("id", q.ID), zap.String("error", q.Error))
		if err := c.cfg.Store.Quarantine(ctx, q); err != nil {
			c.cfg.Logger.Error("quarantine not recorded", zap.Error(err))
		}
	}
	c.quarantined = len(qs)
}

// Quarantined is the number of stored records the last load skipped.
func (c *Coordinator) Quarantined() int { return c.quarantined }

// retain applies the retention setting (PGNs, shards: whatever each kind
// keeps of its finished jobs' data) at start and then hourly.
func (c *Coordinator) retain(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		now := c.cfg.Now()
		for _, wl := range c.workloads {
			r, ok := wl.(workload.Retainer)
			if !ok {
				continue
			}
			kind := wl.Kind()
			if ids, err := r.Expire(ctx, now.Add(-c.cfg.PGNRetention), now); err != nil {
				c.cfg.Logger.Warn("retention", zap.String("kind", kind), zap.Error(err))
			} else if len(ids) > 0 {
				c.cfg.Logger.Info("data of finished jobs expired", zap.String("kind", kind), zap.Strings("jobs", ids), zap.Duration("retention", c.cfg.PGNRetention))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// leaseKey returns the store's lease-signing key, making it on first use,
// so leases survive restarts.
func leaseKey(ctx context.Context, st *store.Store) ([]byte, error) {
	key, err := st.Meta(ctx, leaseKeyName)
	if err != nil {
		return nil, fmt.Errorf("coordinator: lease key: %w", err)
	}
	if len(key) >= 32 {
		return key, nil
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := st.PutMeta(ctx, leaseKeyName, key); err != nil {
		return nil, fmt.Errorf("coordinator: lease key: %w", err)
	}
	return key, nil
}

// NewGRPCServer builds the gRPC face, serving TLS when tlsCfg is set.
func (c *Coordinator) NewGRPCServer(tlsCfg *tls.Config) (*grpc.Server, *health.Server, error) {
	return grpcapi.New(grpcapi.Config{Core: c.Core, Workloads: c.Workloads, Credentials: c.Credentials,
		Store: c.cfg.Store, Artifacts: c.Artifacts, Logger: c.cfg.Logger, Registerer: c.cfg.Registerer, TLS: tlsCfg, Gate: c.gate,
		Forwarded: c.forwarded, Admission: c.Admission})
}

// Forwarded checks the origin followers sign on what they relay
// (package forward); the HTTP face wraps its pages in forward.Trust with it.
func (c *Coordinator) Forwarded() *forward.Signer { return c.forwarded }

// Close stops background work and wakes waiting calls. It does not close
// the store.
func (c *Coordinator) Close() {
	c.Core.Close()
	c.cancel()
	c.wg.Wait()
	if c.inprocSrv != nil {
		c.inproc.Close()
		c.inprocSrv.Stop()
	}
	// Events of leases that ended at the last moment (disconnects) are
	// written after the core's lock is released: write them now.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, wl := range c.workloads {
		if f, ok := wl.(workload.Flusher); ok {
			if err := f.Flush(ctx); err != nil {
				c.cfg.Logger.Warn("events not flushed", zap.String("kind", wl.Kind()), zap.Error(err))
			}
		}
	}
}

// DeclareLiar is an admin's verdict that worker identity lied: it is
// stored as a liar (never trusted again) and every running or resumable
// job it counted results in, of every workload that plays games
// (workload.LiarPurger), is purged of them and recomputed. It returns the
// jobs purged. The pause of a test whose two trusted identities disagree
// ends this way: the admin names the liar, then resumes the test.
func (c *Coordinator) DeclareLiar(ctx context.Context, caller identity.Identity, name, reason string) ([]string, error) {
	if !caller.IsAdmin() {
		return nil, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "credential %s may not declare a worker identity a liar (admins only)", apierr.Q(caller.Name))
	}
	if name == "" || len(name) > core.MaxNameBytes || len(reason) > core.MaxNameBytes {
		return nil, apierr.Invalid("identity %s and reason: 1 to %d bytes each", apierr.Q(name), core.MaxNameBytes)
	}
	if err := textcheck.Check("identity", name); err != nil {
		return nil, apierr.Invalid("%v", err)
	}
	if err := textcheck.Check("reason", reason); err != nil {
		return nil, apierr.Invalid("%v", err)
	}
	why := fmt.Sprintf("declared a liar by %s: %s", caller.Name, reason)
	if err := c.Trust.DeclareLiar(ctx, name, why, c.cfg.Now()); err != nil {
		return nil, apierr.Store(err)
	}
	var purged []string
	for _, wl := range c.workloads {
		if p, ok := wl.(workload.LiarPurger); ok {
			purged = append(purged, p.DeclareLiar(ctx, name, why)...)
		}
	}
	c.cfg.Logger.Warn("worker identity declared a liar", zap.String("identity", name), zap.String("by", caller.Name),
		zap.Strings("purged", purged))
	return purged, nil
}

// usingArtifact names the running jobs of every workload that use an
// uploaded artifact.
func (c *Coordinator) usingArtifact(sha string) []string {
	var out []string
	for _, wl := range c.workloads {
		if u, ok := wl.(workload.ArtifactUser); ok {
			out = append(out, u.UsingArtifact(sha)...)
		}
	}
	return out
}

// Ready is nil while the coordinator serves.
func (c *Coordinator) Ready() error { return c.Core.Ready() }

// HTTPHandler serves /healthz, /readyz (ready() nil: ready) and, with a
// gatherer, /metrics.
func HTTPHandler(g prometheus.Gatherer, ready obs.ReadyFunc) http.Handler {
	return obs.Handler(g, ready)
}

// LoadTLS reads a certificate and key for serving; with caFile it also
// asks workers for client certificates signed by that CA (mTLS): a worker
// may then authenticate by its certificate instead of a token.
func LoadTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	return grpcapi.LoadTLS(certFile, keyFile, caFile)
}
