package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/internal/auth"
	"github.com/arbiter-chess/arbiter/internal/cliexit"
	"github.com/arbiter-chess/arbiter/internal/localcluster"
)

func newCoordinatorCommand() *cobra.Command {
	var (
		cfg  localcluster.ServerConfig
		logs logFlags
		webf webFlags
	)
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Run the cluster coordinator (gRPC for workers and clients, HTTP for the web pages and metrics)",
		Example: `  ARBITER_TOKEN=secret arbiter coordinator --listen :7700 --data /var/lib/arbiter --http :7701
  arbiter coordinator --listen :7700 --data ./data --token T --tls-cert cert.pem --tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signalContext()
			defer cancel()
			cfg.Token = resolveToken(cfg.Token)
			if cfg.MaxWorkersPerIdentity < 1 {
				return cliexit.Usage("--max-workers-per-identity %d: must be at least 1", cfg.MaxWorkersPerIdentity)
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			if err := webf.check(); err != nil {
				return err
			}
			log, err := logs.logger()
			if err != nil {
				return err
			}
			cfg.Logger = log
			cfg.Pages = webf.pages(log)
			srv, err := localcluster.Serve(cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "arbiter coordinator: listening on %s\n", srv.Addr())
			if a := srv.HTTPAddr(); a != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "arbiter coordinator: pages on %s\n", pagesURL(a))
			}
			<-ctx.Done()
			srv.Stop()
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Listen, "listen", "127.0.0.1:7700", "gRPC listen address")
	fl.StringVar(&cfg.Data, "data", "arbiter-data", "data directory (SQLite store)")
	fl.StringVar(&cfg.Token, "token", "", "bearer token every client and worker must present (default: $"+auth.EnvToken+")")
	fl.StringVar(&cfg.HTTP, "http", "", "HTTP listen address for the web pages (docs/web.md), /metrics, /healthz and /readyz (default: off)")
	fl.Float64Var(&cfg.VerifyDefault, "verify-default", 0.05, "verify fraction for perft jobs that set none, where two or more worker identities are live (0..1; 0: none)")
	fl.StringVar(&cfg.TLSCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key serves TLS")
	fl.StringVar(&cfg.TLSKey, "tls-key", "", "TLS private key (PEM)")
	fl.StringVar(&cfg.TLSClientCA, "tls-client-ca", "", "CA (PEM) whose client certificates identify workers (mTLS; needs --tls-cert)")
	fl.DurationVar(&cfg.LeaseDuration, "lease-duration", 30*time.Second, "how long a lease lasts without a heartbeat")
	fl.DurationVar(&cfg.UnitDuration, "unit-duration", 2*time.Second, "target compute time of one unit")
	fl.DurationVar(&cfg.StartTimeout, "start-timeout", coordinator.DefaultStartTimeout, "fail a test or tune that no connected worker can start (none connected, none able, or every able one refused it) after this long")
	fl.DurationVar(&cfg.PGNRetention, "pgn-retention", 0, "delete the games of tests finished longer ago than this, e.g. 2160h (their counts and verdicts stay; 0: keep)")
	fl.IntVar(&cfg.MaxWorkersPerIdentity, "max-workers-per-identity", core.DefaultMaxWorkersPerIdentity,
		"worker ids one credential may register; past it a new name is refused unless one of its workers has been idle a lease duration")
	webf.add(fl)
	logs.add(fl, "info")
	return cmd
}
