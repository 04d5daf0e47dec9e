package coordinator

import (
	"context"
	"net"
	"net/url"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/arbiter-chess/arbiter/coordinator/grpcapi"
	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
	"go.uber.org/zap"
)

// HooksConfig is how the coordinator sends webhooks (package hooks).
type HooksConfig struct {
	// Allow lists the non-public destinations hooks may reach (CIDRs, host
	// names, "*"): --hook-allow.
	Allow []string
	// PublicURL is the web pages' address as users reach it
	// (https://farm.example.org), for the links in webhooks: --public-url.
	PublicURL string
	// Interval, RetryBase and MaxAttempts: package hooks' defaults when 0.
	hooks.Config
}

// InProcess is a connection to this coordinator's own gRPC API that
// never leaves the process (an in-memory listener, no TLS: nothing
// crosses a network). Calls on it carry a bearer token like any other and
// are authenticated, authorized and limited by the same server code, so
// that the JSON API and the webhooks see and may do exactly what a gRPC
// client with that token would.
func (c *Coordinator) InProcess() (grpc.ClientConnInterface, error) {
	c.inprocOnce.Do(func() {
		srv, _, err := grpcapi.New(grpcapi.Config{Core: c.Core, Workloads: c.Workloads, Credentials: c.Credentials,
			Store: c.cfg.Store, Artifacts: c.Artifacts, Logger: c.cfg.Logger, Gate: c.gate, Admission: c.Admission})
		if err != nil {
			c.inprocErr = err
			return
		}
		lis := bufconn.Listen(1 << 20)
		go srv.Serve(lis)
		conn, err := grpc.NewClient("passthrough:///arbiter-in-process",
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcapi.MaxSendMsgBytes), grpc.MaxCallSendMsgSize(grpcapi.MaxRecvMsgBytes)))
		if err != nil {
			srv.Stop()
			c.inprocErr = err
			return
		}
		c.inproc, c.inprocSrv = conn, srv
	})
	return c.inproc, c.inprocErr
}

// startHooks starts the webhooks' sender (Hooks) on the in-process API.
func (c *Coordinator) startHooks(ctx, runCtx context.Context) error {
	conn, err := c.InProcess()
	if err != nil {
		return err
	}
	hc := c.cfg.Hooks.Config
	hc.Store, hc.Jobs, hc.Token, hc.Allow = c.cfg.Store, conn, c.cfg.Token, c.cfg.Hooks.Allow
	hc.Logger, hc.Now, hc.Registerer = c.cfg.Logger, c.cfg.Now, c.cfg.Registerer
	if base := strings.TrimRight(c.cfg.Hooks.PublicURL, "/"); base != "" {
		hc.PageURL = func(jobID string) string {
			if snap, err := c.Core.Job(jobID, false); err == nil {
				if j, ok := snap.(interface{ GetKind() string }); ok {
					if p := jobkind.Lookup(j.GetKind()).Path; p != "" {
						return base + p + url.PathEscape(jobID)
					}
				}
			}
			return base + "/jobs/" + url.PathEscape(jobID)
		}
	}
	c.Hooks, err = hooks.New(ctx, hc)
	if err != nil {
		return err
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.Hooks.Run(runCtx)
	}()
	c.cfg.Logger.Debug("webhooks started", zap.Strings("allow", hc.Allow))
	return nil
}
