// Package clusterclient dials a coordinator the way every cluster client
// (worker, CLI) does: bearer token on every call, TLS when asked.
package clusterclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arbiter-chess/arbiter/internal/auth"
)

// Options says how to reach a coordinator.
type Options struct {
	Token string
	// TLS turns on TLS with the system roots, or CAFile's certificates.
	TLS    bool
	CAFile string
	// ServerName overrides the name checked in the certificate.
	ServerName string
}

// Dial returns a client connection. It does not block: the connection
// (re)connects in the background with backoff, and calls fail with
// Unavailable while the coordinator is away.
func Dial(addr string, o Options) (*grpc.ClientConn, error) {
	if addr == "" {
		return nil, fmt.Errorf("coordinator address missing")
	}
	if o.Token == "" {
		return nil, fmt.Errorf("token missing (--token or %s)", auth.EnvToken)
	}
	var creds credentials.TransportCredentials
	if o.TLS || o.CAFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("TLS CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("TLS CA file %q holds no PEM certificate", o.CAFile)
			}
			cfg.RootCAs = pool
		}
		creds = credentials.NewTLS(cfg)
	} else {
		creds = insecure.NewCredentials()
	}
	bc := backoff.DefaultConfig
	bc.MaxDelay = 3 * time.Second
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithPerRPCCredentials(auth.Token{Value: o.Token, Secure: o.TLS || o.CAFile != ""}),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bc, MinConnectTimeout: 2 * time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)),
	)
}
