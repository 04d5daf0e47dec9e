// Package auth implements the cluster's bearer-token authentication: gRPC
// server interceptors that check the "authorization: Bearer <token>"
// metadata on every unary and streaming call, and the matching client
// credentials.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// EnvToken is the environment variable that may carry the token.
const EnvToken = "ARBITER_TOKEN"

// Checker verifies tokens. Methods listed in Open need none: the gRPC health
// service, which reveals nothing and changes nothing, so that load balancers
// and Kubernetes probes (which cannot send metadata) can use it.
type Checker struct {
	sum  [32]byte
	Open map[string]bool
}

// HealthMethods are the read-only gRPC health methods.
var HealthMethods = map[string]bool{
	"/grpc.health.v1.Health/Check": true,
	"/grpc.health.v1.Health/Watch": true,
	"/grpc.health.v1.Health/List":  true,
}

// NewChecker returns a Checker for token, which must not be empty.
func NewChecker(token string, open map[string]bool) *Checker {
	return &Checker{sum: sha256.Sum256([]byte(token)), Open: open}
}

// Check verifies the token in ctx's incoming metadata.
func (c *Checker) Check(ctx context.Context, method string) error {
	if c.Open[method] {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return status.Error(codes.Unauthenticated, "missing bearer token (authorization metadata)")
	}
	tok, ok := strings.CutPrefix(vals[0], "Bearer ")
	if !ok {
		return status.Error(codes.Unauthenticated, "authorization metadata is not \"Bearer <token>\"")
	}
	// Compare digests in constant time so the length leaks nothing either.
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(sum[:], c.sum[:]) != 1 {
		return status.Error(codes.Unauthenticated, "invalid token")
	}
	return nil
}

// Unary is the server interceptor for unary calls.
func (c *Checker) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := c.Check(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// Stream is the server interceptor for streaming calls.
func (c *Checker) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := c.Check(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

// Token is client credentials that send the bearer token on every call.
type Token struct {
	Value string
	// Secure requires a TLS connection before the token is sent.
	Secure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t Token) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + t.Value}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (t Token) RequireTransportSecurity() bool { return t.Secure }
