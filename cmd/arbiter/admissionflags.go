package main

import (
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/coordinator/admission"
)

// addAdmissionFlags adds the coordinator's admission flags: what every
// door (gRPC, the JSON API, the web forms, sign-in) may take in before
// reading bodies (package admission).
func addAdmissionFlags(fl *pflag.FlagSet, c *admission.Config) {
	c.MaxBytes, c.MaxBytesPerIdentity = admission.DefaultMaxBytes, admission.DefaultMaxBytesPerIdentity
	c.HashWorkers, c.HashQueue = admission.DefaultHashWorkers, admission.DefaultHashQueue
	fl.Int64Var(&c.MaxBytes, "max-request-bytes", c.MaxBytes,
		"request bytes all callers together may have in flight; each call reserves its route's limit before its body is read, and one past it is refused (retried by workers)")
	fl.Int64Var(&c.MaxBytesPerIdentity, "max-request-bytes-per-identity", c.MaxBytesPerIdentity,
		"request bytes one non-admin credential (or, unsigned, one client address) may have in flight; at least the largest route's limit (32 MiB)")
	fl.IntVar(&c.HashWorkers, "hash-workers", c.HashWorkers, "password hashes (sign-in, sign-up; 19 MiB each) computed at once")
	fl.IntVar(&c.HashQueue, "hash-queue", c.HashQueue, "password hashes that may wait for a worker; more are refused at once (429)")
	fl.StringSliceVar(&c.TrustedProxies, "trusted-proxy", nil,
		"reverse proxy (CIDR or address; repeat the flag) whose X-Forwarded-For names the client for the sign-in and sign-up limits; default none: the peer's address counts, loopback included")
}
