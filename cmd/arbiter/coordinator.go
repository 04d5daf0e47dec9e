package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/auth"
	"github.com/arbiter-chess/arbiter/internal/obs"
)

func init() { subcommands = append(subcommands, newCoordinatorCommand) }

type coordinatorFlags struct {
	listen        string
	data          string
	token         string
	http          string
	verifyDefault float64
	tlsCert       string
	tlsKey        string
	tlsClientCA   string
	leaseDuration time.Duration
	unitDuration  time.Duration
	log           logFlags
	// registry, when set, receives the coordinator's metrics (arbiter up
	// adds its local workers' to it); otherwise a new one is made.
	registry *prometheus.Registry
}

func newCoordinatorCommand() *cobra.Command {
	var f coordinatorFlags
	cmd := &cobra.Command{
		Use:   "coordinator",
		Short: "Run the cluster coordinator (gRPC for workers and clients, HTTP for metrics)",
		Example: `  ARBITER_TOKEN=secret arbiter coordinator --listen :7700 --data /var/lib/arbiter --http :7701
  arbiter coordinator --listen :7700 --data ./data --token T --tls-cert cert.pem --tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signalContext()
			defer cancel()
			rc, err := startCoordinator(f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			<-ctx.Done()
			rc.stop()
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7700", "gRPC listen address")
	fl.StringVar(&f.data, "data", "arbiter-data", "data directory (SQLite store)")
	fl.StringVar(&f.token, "token", "", "bearer token every client and worker must present (default: $"+auth.EnvToken+")")
	fl.StringVar(&f.http, "http", "", "HTTP listen address for /metrics, /healthz and /readyz (default: off)")
	fl.Float64Var(&f.verifyDefault, "verify-default", 0, "verify fraction for jobs that do not set one (0..1)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key serves TLS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "TLS private key (PEM)")
	fl.StringVar(&f.tlsClientCA, "tls-client-ca", "", "CA (PEM) whose client certificates identify workers (mTLS; needs --tls-cert)")
	fl.DurationVar(&f.leaseDuration, "lease-duration", 30*time.Second, "how long a lease lasts without a heartbeat")
	fl.DurationVar(&f.unitDuration, "unit-duration", 2*time.Second, "target compute time of one unit")
	f.log.add(fl, "info")
	return cmd
}

// runningCoordinator is a coordinator serving on a listener.
type runningCoordinator struct {
	addr    string
	token   string
	c       *coordinator.Coordinator
	st      *store.Store
	grpc    *grpc.Server
	health  *health.Server
	http    *obs.Server
	log     *zap.Logger
	done    chan struct{}
	serving atomic.Bool
}

// ready is /readyz: the store is open and loaded, gRPC is serving.
func (rc *runningCoordinator) ready() error {
	if !rc.serving.Load() {
		return errors.New("gRPC not serving")
	}
	return rc.c.Ready()
}

func startCoordinator(f coordinatorFlags, stderr io.Writer) (*runningCoordinator, error) {
	f.token = resolveToken(f.token)
	if f.token == "" {
		return nil, usageError("no token: pass --token or set %s (nothing is open without one)", auth.EnvToken)
	}
	if f.verifyDefault < 0 || f.verifyDefault > 1 {
		return nil, usageError("--verify-default %v: must be between 0 and 1", f.verifyDefault)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return nil, usageError("--tls-cert and --tls-key go together")
	}
	if f.leaseDuration < 100*time.Millisecond {
		return nil, usageError("--lease-duration %v: must be at least 100ms", f.leaseDuration)
	}
	if f.unitDuration <= 0 {
		return nil, usageError("--unit-duration %v: must be positive", f.unitDuration)
	}
	log, err := f.log.logger()
	if err != nil {
		return nil, err
	}
	var tlsCfg *tls.Config
	if f.tlsCert != "" {
		if tlsCfg, err = coordinator.LoadTLS(f.tlsCert, f.tlsKey, f.tlsClientCA); err != nil {
			return nil, usageError("%v", err)
		}
	} else if f.tlsClientCA != "" {
		return nil, usageError("--tls-client-ca needs --tls-cert and --tls-key")
	}
	st, err := store.Open(f.data)
	if err != nil {
		return nil, usageError("--data: %v", err)
	}
	reg := f.registry
	if reg == nil {
		reg = obs.NewRegistry()
	}
	c, err := coordinator.New(context.Background(), coordinator.Config{
		Store: st, Logger: log, Token: f.token, LeaseDuration: f.leaseDuration, TargetUnitDuration: f.unitDuration,
		VerifyDefault: f.verifyDefault, Registerer: reg,
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
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		c.Close()
		st.Close()
		return nil, usageError("--listen %s: %v", f.listen, err)
	}
	rc := &runningCoordinator{addr: lis.Addr().String(), token: f.token, c: c, st: st, grpc: srv, health: hs, log: log, done: make(chan struct{})}
	if f.http != "" {
		rc.http, err = obs.Serve(f.http, coordinator.HTTPHandler(reg, rc.ready), log)
		if err != nil {
			lis.Close()
			c.Close()
			st.Close()
			return nil, usageError("--http %s: %v", f.http, err)
		}
	}
	rc.serving.Store(true)
	go func() {
		defer close(rc.done)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Error("grpc serve", zap.Error(err))
		}
	}()
	log.Info("coordinator listening", zap.String("addr", rc.addr), zap.String("data", f.data), zap.Bool("tls", tlsCfg != nil))
	fmt.Fprintf(stderr, "arbiter coordinator: listening on %s\n", rc.addr)
	return rc, nil
}

// stop shuts down: health NOT_SERVING, drain calls briefly, close the store.
func (rc *runningCoordinator) stop() {
	rc.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	rc.serving.Store(false)
	rc.c.Close() // wakes long polls and watches
	stopped := make(chan struct{})
	go func() { rc.grpc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		rc.grpc.Stop()
	}
	<-rc.done
	rc.http.Close()
	rc.st.Close()
	rc.log.Info("coordinator stopped")
	rc.log.Sync()
}
