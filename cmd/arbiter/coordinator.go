package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/forward"
	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/coordinator/leader"
	"github.com/arbiter-chess/arbiter/coordinator/quota"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	"github.com/arbiter-chess/arbiter/local/localcluster"
)

// envStore names the variable that may hold --store (a URL with a
// password is better kept out of the process list).
const envStore = "ARBITER_STORE"

func newCoordinatorCommand() *cobra.Command {
	var (
		cfg  localcluster.ServerConfig
		logs logFlags
		webf webFlags
		// Kinds that plug in bring their own flags (workload.Kind.Flags),
		// read into their settings once parsed.
		kindFlags = map[string]func() (any, error){}
	)
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Run the cluster coordinator (gRPC for workers and clients, HTTP for the web pages and metrics)",
		Example: `  ARBITER_TOKEN=secret arbiter coordinator --listen :7700 --data /var/lib/arbiter --http :7701
  arbiter coordinator --listen :7700 --data ./data --token T --tls-cert cert.pem --tls-key key.pem
  ARBITER_STORE=postgres://arbiter:PASSWORD@db:5432/arbiter arbiter coordinator --data /var/lib/arbiter --token T   # state in PostgreSQL (docs/ha.md)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := clicmd.SignalContext()
			defer cancel()
			cfg.Token = resolveToken(cfg.Token)
			if cfg.Store == "" {
				cfg.Store = os.Getenv(envStore)
			}
			if cfg.MaxWorkersPerIdentity < 1 {
				return cliexit.Usage("--max-workers-per-identity %d: must be at least 1", cfg.MaxWorkersPerIdentity)
			}
			if cfg.ForwardMaxCalls < 1 {
				return cliexit.Usage("--forward-max-calls %d: must be at least 1", cfg.ForwardMaxCalls)
			}
			if err := checkRequestFlags(cfg); err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			cfg.KindSettings = map[string]any{}
			for kind, settings := range kindFlags {
				s, err := settings()
				if err != nil {
					return cliexit.Usage("%v", err)
				}
				cfg.KindSettings[kind] = s
			}
			if err := webf.check(); err != nil {
				return err
			}
			log, err := logs.logger()
			if err != nil {
				return err
			}
			cfg.Logger = log
			cfg.Pages, cfg.API = webf.pages(log), httpapi.ForCoordinator
			cfg.Hooks.JobJSON = jobJSON
			cfg.Accounts = webf.accounts
			stderr := cmd.ErrOrStderr()
			cfg.OnListening = func(addr string) {
				fmt.Fprintf(stderr, "arbiter coordinator: listening on %s\n", addr)
			}
			srv, err := localcluster.Serve(cfg)
			if err != nil {
				return err
			}
			announce(stderr, srv)
			return serveUntilStopped(ctx, srv, cfg.LeaderTimeout, log)
		},
	}
	fl := cmd.Flags()
	for _, k := range workload.Kinds() {
		if k.Flags != nil {
			kindFlags[k.Name] = k.Flags(fl)
		}
	}
	fl.StringVar(&cfg.Listen, "listen", "127.0.0.1:7700", "gRPC listen address")
	fl.StringVar(&cfg.Data, "data", "arbiter-data", "data directory: the SQLite store, and with --store the files beside the database (artifacts, datagen shards)")
	fl.StringVar(&cfg.Store, "store", "", "PostgreSQL database to keep the state in, postgres://user:password@host:port/db (default: $"+envStore+"; neither: SQLite in --data)")
	fl.DurationVar(&cfg.LeaderTimeout, "leader-timeout", leader.DefaultTimeout, "with a PostgreSQL --store shared by several coordinators: how long the leader may go unheard (paused, cut off) before another takes over (docs/ha.md)")
	fl.StringVar(&cfg.Advertise, "advertise", "", "with a PostgreSQL --store: the gRPC address followers name as the leader's when this one leads (default: --listen, with this host's name for an unspecified host)")
	fl.IntVar(&cfg.ForwardMaxCalls, "forward-max-calls", forward.DefaultMaxCalls, "with a PostgreSQL --store: gRPC calls and page requests a follower relays to the leader at once; more are refused as unavailable (clients retry)")
	fl.StringVar(&cfg.ForwardCA, "forward-ca", "", "with a PostgreSQL --store and TLS: CA certificates (PEM) a follower trusts for the leader's certificate, besides the system's and those in --tls-cert (docs/ha.md)")
	fl.StringVar(&cfg.ForwardServerName, "forward-server-name", "", "with a PostgreSQL --store and TLS: the name a follower checks the leader's certificate for (default: the host of the leader's advertised address)")
	fl.StringVar(&cfg.Token, "token", "", "bearer token every client and worker must present (default: $"+auth.EnvToken+")")
	fl.StringVar(&cfg.HTTP, "http", "", "HTTP listen address for the web pages (docs/web.md), /metrics, /healthz and /readyz (default: off)")
	fl.Float64Var(&cfg.VerifyDefault, "recheck-default", 0.05, "share of perft units computed again by a second identity for jobs that set none, where two or more worker identities are live (0..1; 0: none)")
	fl.Float64Var(&cfg.VerifyDefault, "verify-default", 0.05, "deprecated: use --recheck-default")
	fl.MarkDeprecated("verify-default", "use --recheck-default")
	fl.StringVar(&cfg.TLSCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key serves TLS")
	fl.StringVar(&cfg.TLSKey, "tls-key", "", "TLS private key (PEM)")
	fl.StringVar(&cfg.TLSClientCA, "tls-client-ca", "", "CA (PEM) whose client certificates identify workers (mTLS; needs --tls-cert)")
	fl.DurationVar(&cfg.LeaseDuration, "lease-duration", 30*time.Second, "how long a lease lasts without a heartbeat")
	fl.DurationVar(&cfg.UnitDuration, "unit-duration", 2*time.Second, "target compute time of one unit")
	fl.DurationVar(&cfg.StartTimeout, "start-timeout", coordinator.DefaultStartTimeout, "fail a test, tune or dataset that no connected worker can start (none connected, none able, or every able one refused it) after this long")
	fl.DurationVar(&cfg.PGNRetention, "pgn-retention", 0, "delete the games of tests and the shards of datasets finished longer ago than this, e.g. 2160h (their counts and verdicts stay; 0: keep)")
	fl.IntVar(&cfg.MaxWorkersPerIdentity, "max-workers-per-identity", core.DefaultMaxWorkersPerIdentity,
		"worker ids one credential may register; past it a new name is refused unless one of its workers has been idle a lease duration")
	addIdentityLimitFlags(fl, &cfg.Limits)
	addAdmissionFlags(fl, &cfg.Admission)
	fl.DurationVar(&cfg.UploadAbandonAfter, "upload-abandon-after", artifacts.DefaultAbandonAfter, "remove an engine upload's partial file once idle this long (checked at start and every quarter of it)")
	addRequestFlags(fl, &cfg)
	webf.add(fl)
	logs.add(fl, "info")
	return cmd
}

// addRequestFlags adds the flags of the requests the coordinator makes
// where users say: git fetches and webhooks (docs/security.md, "Requests
// the coordinator makes for users").
func addRequestFlags(fl *pflag.FlagSet, cfg *localcluster.ServerConfig) {
	fl.StringVar(&cfg.Git.CredentialsFile, "git-credentials", "", "a git-credential-store file (https://USER:TOKEN@HOST per line) for the https repositories tests name with source=git:URL@REF; never stored with a test")
	fl.StringVar(&cfg.Git.SSHKey, "git-ssh-key", "", "private key for the ssh repositories tests name with source=git:URL@REF (else ssh's own keys and agent)")
	fl.StringVar(&cfg.Git.SSHKnownHosts, "git-ssh-known-hosts", "", "known_hosts file ssh checks the hosts of ssh repositories against, adding new ones (else ~/.ssh/known_hosts)")
	fl.BoolVar(&cfg.Git.AllowFile, "git-allow-file", false, "let tests name file:// repositories (they read this machine's disk)")
	fl.StringSliceVar(&cfg.Git.Allow, "git-allow", nil, "destinations outside the public internet that fetches of source=git:URL@REF may reach: CIDRs (10.0.0.0/8), addresses or host names (* for all); loopback, private and link-local ones are refused otherwise")
	fl.DurationVar(&cfg.Git.Timeout, "git-timeout", artifacts.DefaultGitTimeout, "bound of one fetch of a test's git repository")
	fl.DurationVar(&cfg.Git.Stall, "git-stall", artifacts.DefaultGitStall, "a fetch of a test's git repository that receives nothing for this long is stopped")
	fl.Int64Var(&cfg.Git.MaxBytes, "git-max-bytes", artifacts.DefaultGitMaxBytes, "bytes one fetch of a test's git repository may bring; past them it is stopped while it streams and its mirror removed")
	fl.StringSliceVar(&cfg.Hooks.Allow, "hook-allow", nil, "destinations outside the public internet that webhooks may reach: CIDRs (10.0.0.0/8), addresses or host names; loopback, private and link-local ones are refused otherwise")
	fl.IntVar(&cfg.Hooks.PerOwner, "hook-concurrency-per-owner", hooks.DefaultPerOwner, "webhook deliveries of one hook owner attempted at once (one user's slow receivers wait on these, not on other users')")
	fl.IntVar(&cfg.Hooks.Concurrent, "hook-concurrency", hooks.DefaultConcurrent, "webhook deliveries attempted at once in all")
	fl.DurationVar(&cfg.Hooks.RetryBase, "hook-retry-base", hooks.DefaultRetryBase, "wait before a webhook's second attempt; each later one waits twice as long (at most an hour)")
	fl.StringVar(&cfg.Hooks.PublicURL, "public-url", "", "the web pages' address as users reach them (https://farm.example.org), for the links in webhooks and result blocks")
}

// checkRequestFlags refuses bounds of git fetches and webhook deliveries
// that would switch them off or contradict each other.
func checkRequestFlags(cfg localcluster.ServerConfig) error {
	if cfg.Git.MaxBytes < 1 || cfg.Git.Stall <= 0 || cfg.Git.Timeout <= 0 {
		return cliexit.Usage("--git-max-bytes %d, --git-stall %v, --git-timeout %v: each must be more than 0", cfg.Git.MaxBytes, cfg.Git.Stall, cfg.Git.Timeout)
	}
	if cfg.Hooks.PerOwner < 1 || cfg.Hooks.Concurrent < cfg.Hooks.PerOwner {
		return cliexit.Usage("--hook-concurrency-per-owner %d, --hook-concurrency %d: want 1 <= per owner <= in all",
			cfg.Hooks.PerOwner, cfg.Hooks.Concurrent)
	}
	return nil
}

// serveUntilStopped serves until ctx ends (a signal) or the coordinator
// loses the lead, and stops it.
func serveUntilStopped(ctx context.Context, srv *localcluster.Server, leaderTimeout time.Duration, log *zap.Logger) error {
	select {
	case <-ctx.Done():
		srv.Stop()
		return nil
	case <-srv.Lost():
		// Its memory (leases, job state) is not to be trusted
		// after another coordinator led: a new process starts
		// as a follower and loads the store when it leads.
		// Stopping waits for the store's writes in progress, which
		// never end when the database went silent (a network
		// split: no error, no close, until TCP gives up minutes
		// later). They are fenced and were never acknowledged,
		// so past --leader-timeout (another may lead by then) the
		// process exits without them: the server rolls their
		// transactions back when its sessions end.
		stopped := make(chan struct{})
		go func() { srv.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(leaderTimeout):
			log.Warn("coordinator stop did not finish within --leader-timeout (the database does not answer): exiting without waiting for its writes in progress",
				zap.Duration("leader_timeout", leaderTimeout))
			log.Sync()
		}
		return failure("this coordinator lost the lead (see the log: another took over, or the database went unconfirmed for half of --leader-timeout); exiting so that its supervisor restarts it as a follower")
	}
}

// announce tells the operator whether this coordinator follows and where
// its pages are.
func announce(stderr io.Writer, srv *localcluster.Server) {
	if !srv.Leading() {
		st := srv.Election()
		fmt.Fprintf(stderr, "arbiter coordinator: following (leader %s, term %d); forwarding gRPC on %s and the pages to the leader, serving them itself once it leads\n", orNone(st.Leader), st.Term, srv.Addr())
	}
	if a := srv.HTTPAddr(); a != "" {
		fmt.Fprintf(stderr, "arbiter coordinator: pages on %s\n", pagesURL(a))
	}
}

// addIdentityLimitFlags adds the flags of the limits each non-admin
// identity is held to (package quota).
func addIdentityLimitFlags(fl *pflag.FlagSet, l *quota.Limits) {
	*l = quota.Defaults
	fl.IntVar(&l.Connections, "max-connections-per-identity", l.Connections, "open connections one non-admin credential may hold (0: no limit)")
	fl.IntVar(&l.Calls, "max-calls-per-identity", l.Calls, "calls in progress one client credential may have over all its connections; also bounds the request memory it can pin (0: no limit)")
	fl.IntVar(&l.WorkerCalls, "max-calls-per-worker-identity", l.WorkerCalls, "calls in progress one worker credential may have over all its worker processes (each holds cores+2) (0: no limit)")
	fl.IntVar(&l.SubmitsPerMinute, "max-submits-per-minute", l.SubmitsPerMinute, "jobs one non-admin credential may submit per minute, as a burst then evenly (0: no limit)")
	fl.IntVar(&l.RunningJobs, "max-running-jobs-per-identity", l.RunningJobs, "unfinished jobs (perft, tests, tunes) one non-admin credential may own (0: no limit)")
	fl.IntVar(&l.Uploads, "max-uploads-per-identity", l.Uploads, "engine uploads one non-admin credential may have in progress (0: no limit)")
	fl.IntVar(&l.Leases, "max-leases-per-identity", l.Leases, "leases the workers of one non-admin credential may hold at once, over all its worker ids (0: no limit)")
	fl.Int64Var(&l.DiskBytes, "max-disk-bytes-per-identity", l.DiskBytes, "bytes of the coordinator's disk one non-admin credential may fill with the engines it uploaded or named by git and the git mirrors its fetches made (0: no limit)")
	fl.IntVar(&l.Artifacts, "max-artifacts-per-identity", l.Artifacts, "engine artifacts one non-admin credential may have stored (0: no limit)")
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}

// resolveToken is the credential of a command that serves rather than
// dials (coordinator, up): the flag's, else the environment's.
func resolveToken(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(auth.EnvToken)
}
