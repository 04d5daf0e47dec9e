package coordinator

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/arbiter-chess/arbiter/internal/auth"
	"github.com/arbiter-chess/arbiter/internal/obs"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// ServerConfig is how the gRPC face is exposed.
type ServerConfig struct {
	// Token every call must present (except the health service).
	Token string
	// TLS, when set, serves TLS.
	TLS *tls.Config
}

// LoadTLS reads a certificate and key for serving.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %q / key %q: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// NewGRPCServer builds a gRPC server with the worker, job and health
// services, the token check on every call, and TLS when configured. The
// returned health server is SERVING; set it to NOT_SERVING before stopping.
func (c *Coordinator) NewGRPCServer(sc ServerConfig) (*grpc.Server, *health.Server, error) {
	if sc.Token == "" {
		return nil, nil, fmt.Errorf("coordinator: a token is required")
	}
	chk := auth.NewChecker(sc.Token, auth.HealthMethods)
	opts := []grpc.ServerOption{
		// RPC metrics first, so they see the token check's refusals too.
		grpc.ChainUnaryInterceptor(c.metrics.grpc.UnaryServerInterceptor(), c.metrics.rejectUnauthenticated, chk.Unary),
		grpc.ChainStreamInterceptor(c.metrics.grpc.StreamServerInterceptor(), chk.Stream),
		grpc.MaxRecvMsgSize(16 << 20),
	}
	if sc.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(sc.TLS)))
	}
	srv := grpc.NewServer(opts...)
	arbiterv1.RegisterWorkerServiceServer(srv, c.WorkerServer())
	arbiterv1.RegisterJobServiceServer(srv, c.JobServer())
	arbiterv1.RegisterVerifyServiceServer(srv, c.VerifyServer())
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(arbiterv1.WorkerService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(arbiterv1.JobService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(arbiterv1.VerifyService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	c.metrics.grpc.InitializeMetrics(srv) // every method × code series from the start
	return srv, hs, nil
}

// HTTPHandler serves /healthz, /readyz (ready() nil: ready; nil ready:
// always) and, with a gatherer, /metrics.
func HTTPHandler(g prometheus.Gatherer, ready obs.ReadyFunc) http.Handler {
	return obs.Handler(g, ready)
}
