// Package quota bounds what one identity may hold on the coordinator:
// connections, calls in progress, submits per minute, running jobs, stored
// artifacts, uploads in progress and leases held by its workers. Every refusal is a RESOURCE_EXHAUSTED
// domain error (reason QUOTA) that names the limit, its value and the
// coordinator flag that sets it, so an operator who meets one knows what
// to raise and a client knows it is its own usage, not the cluster, that
// is full.
//
// Admins are not limited: the operator's own credential must always be
// able to inspect and repair a coordinator whose clients are at their
// limits. A limit of 0 switches that limit off.
//
// The gRPC layer checks connections and calls from the request headers,
// before the body is read (see coordinator/grpcapi); the core checks
// submits and running jobs, the artifact store uploads and artifacts.
package quota

import (
	"fmt"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
)

// Limits are per identity; 0 switches one off.
type Limits struct {
	// Connections is how many connections an identity may hold open.
	Connections int
	// Calls is how many calls (unary or streaming) a client identity may
	// have in progress at once, over all its connections; WorkerCalls the
	// same for a worker identity, whose every worker process holds one
	// long Lease call per slot (cores + 2 calls a process), and a pool of
	// machines may share it. Each call may make the coordinator read one
	// message of up to the server's largest per-method limit, so these
	// also bound the request memory one identity can pin.
	Calls, WorkerCalls int
	// SubmitsPerMinute is how many jobs an identity may submit in any
	// minute (a token bucket: a burst of this many, then one per
	// minute/SubmitsPerMinute).
	SubmitsPerMinute int
	// RunningJobs is how many unfinished jobs (perft jobs, tests, tunes)
	// an identity may own; a submit past it is refused.
	RunningJobs int
	// Artifacts is how many engine artifacts an identity may have stored.
	Artifacts int
	// Uploads is how many artifact uploads an identity may have begun and
	// not finished.
	Uploads int
	// DiskBytes is how many bytes of the coordinator's disk one identity
	// may fill with the artifacts it uploaded (or fetched from git) and
	// the git mirrors its fetches made.
	DiskBytes int64
	// Leases is how many leases the workers of one identity may hold at
	// once, over all its worker ids. A worker's own bound (a lease per
	// core it declares) is its word, and it may declare 65,536 cores;
	// this one is the operator's.
	Leases int
}

// Defaults fit a team farm: a client script submitting a test suite, a
// worker credential shared by a few dozen machines (each worker process
// holds one connection and cores + 2 calls). Big farms give each pool of
// machines its own worker credential or raise the limits.
var Defaults = Limits{
	Connections:      64,
	Calls:            64,
	WorkerCalls:      2048,
	SubmitsPerMinute: 120,
	RunningJobs:      100,
	Artifacts:        200,
	Uploads:          4,
	Leases:           4096,
	DiskBytes:        2 << 30,
}

// Flag names, for messages: a refusal tells the operator what to change.
const (
	FlagConnections      = "--max-connections-per-identity"
	FlagCalls            = "--max-calls-per-identity"
	FlagWorkerCalls      = "--max-calls-per-worker-identity"
	FlagSubmitsPerMinute = "--max-submits-per-minute"
	FlagRunningJobs      = "--max-running-jobs-per-identity"
	FlagArtifacts        = "--max-artifacts-per-identity"
	FlagUploads          = "--max-uploads-per-identity"
	FlagLeases           = "--max-leases-per-identity"
	FlagDiskBytes        = "--max-disk-bytes-per-identity"
)

// Validate refuses negative limits, naming the flag.
func (l Limits) Validate() error {
	for _, f := range []struct {
		flag string
		v    int
	}{{FlagConnections, l.Connections}, {FlagCalls, l.Calls}, {FlagWorkerCalls, l.WorkerCalls}, {FlagSubmitsPerMinute, l.SubmitsPerMinute},
		{FlagRunningJobs, l.RunningJobs}, {FlagArtifacts, l.Artifacts}, {FlagUploads, l.Uploads}, {FlagLeases, l.Leases}} {
		if f.v < 0 {
			return fmt.Errorf("%s %d: must be 0 (no limit) or more", f.flag, f.v)
		}
	}
	if l.DiskBytes < 0 {
		return fmt.Errorf("%s %d: must be 0 (no limit) or more", FlagDiskBytes, l.DiskBytes)
	}
	return nil
}

// Exhausted is the refusal of one limit.
func Exhausted(id identity.Identity, what string, limit int, flag string) *apierr.Error {
	return apierr.New(apierr.ResourceExhausted, apierr.ReasonQuota,
		"identity %s is at its limit of %d %s (coordinator flag %s)", apierr.Q(id.Name), limit, what, flag)
}

// CheckBytes refuses when id, holding have bytes, would pass limit with
// adding more.
func CheckBytes(id identity.Identity, have, adding, limit int64, what, flag string) error {
	if !Limited(id) || limit == 0 || have+adding <= limit {
		return nil
	}
	return apierr.New(apierr.ResourceExhausted, apierr.ReasonQuota,
		"identity %s holds %d bytes of %s; %d more would pass its limit of %d (coordinator flag %s)", apierr.Q(id.Name), have, what, adding, limit, flag)
}

// Limited reports whether limits apply to id at all.
func Limited(id identity.Identity) bool { return !id.IsAdmin() }

// Gate counts connections and calls in progress and paces submits, per
// identity. It is safe for concurrent use; its methods do not block (the
// gRPC tap handle that calls them runs on a connection's reader).
type Gate struct {
	lim Limits
	now func() time.Time

	mu      sync.Mutex
	conns   map[string]int
	calls   map[string]int
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewGate returns a gate for lim; now is the clock (nil: time.Now).
func NewGate(lim Limits, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	return &Gate{lim: lim, now: now, conns: map[string]int{}, calls: map[string]int{}, buckets: map[string]*bucket{}}
}

// Limits returns the gate's limits.
func (g *Gate) Limits() Limits { return g.lim }

// AddConn counts a connection of id; release uncounts it (once).
func (g *Gate) AddConn(id identity.Identity) (release func(), err error) {
	return g.add(id, g.conns, g.lim.Connections, "open connections", FlagConnections)
}

// AddCall counts a call in progress of id; release uncounts it (once).
func (g *Gate) AddCall(id identity.Identity) (release func(), err error) {
	if id.Role == identity.Worker {
		return g.add(id, g.calls, g.lim.WorkerCalls, "calls in progress", FlagWorkerCalls)
	}
	return g.add(id, g.calls, g.lim.Calls, "calls in progress", FlagCalls)
}

func (g *Gate) add(id identity.Identity, counts map[string]int, limit int, what, flag string) (func(), error) {
	if !Limited(id) || limit == 0 {
		return func() {}, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if counts[id.Name] >= limit {
		return nil, Exhausted(id, what, limit, flag)
	}
	counts[id.Name]++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if counts[id.Name]--; counts[id.Name] <= 0 {
				delete(counts, id.Name)
			}
		})
	}, nil
}

// Submit takes one submit from id's bucket, or refuses.
func (g *Gate) Submit(id identity.Identity) error {
	per := g.lim.SubmitsPerMinute
	if !Limited(id) || per == 0 {
		return nil
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.buckets[id.Name]
	if b == nil {
		b = &bucket{tokens: float64(per), at: now}
		g.buckets[id.Name] = b
	}
	if dt := now.Sub(b.at); dt > 0 {
		b.tokens = min(float64(per), b.tokens+dt.Minutes()*float64(per))
		b.at = now
	}
	if b.tokens < 1 {
		return Exhausted(id, "submits per minute", per, FlagSubmitsPerMinute)
	}
	b.tokens--
	return nil
}

// Check refuses when id already holds have of something limited to limit.
func Check(id identity.Identity, have, limit int, what, flag string) error {
	if !Limited(id) || limit == 0 || have < limit {
		return nil
	}
	return Exhausted(id, what, limit, flag)
}
