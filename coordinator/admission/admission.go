// Package admission is the one place where the coordinator decides
// whether to read a request at all. Every door (gRPC, the JSON API under
// /api/v1, the web forms, sign-in and sign-up, artifact streams) asks it,
// from the request's headers alone, before a byte of the body is read:
// who is calling (or anonymous), which route, the route's role and byte
// limit (one table: routes.go), and whether the caller's share of the
// request bytes in flight and of the expensive work (password hashing)
// allows it now.
//
// Invariants:
//   - A route without a rule in the table is not served: the doors
//     register their routes through this package (HTTPDoor.Handle, the
//     gRPC tap's Rule), which refuses an unknown one.
//   - A body is read only after the credential, the role, the CSRF token
//     (doors with cookies), the declared length and a reservation of the
//     route's limit from the byte budget have passed; the reservation is
//     held until the request is done with, so the bytes all callers can
//     make the coordinator hold at once are bounded by Config.MaxBytes,
//     and one identity's by Config.MaxBytesPerIdentity.
//   - Expensive work (argon2 hashing) runs in a bounded pool with a
//     bounded queue; past both it is refused at once (BUSY), never
//     queued without bound.
//   - X-Forwarded-For is believed only from the proxies the operator
//     lists (Config.TrustedProxies); the default is none.
//
// The package imports no other part of the coordinator: the doors pass
// in how they identify a caller and how they write a refusal.
package admission

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

// Config is the operator's settings (coordinator flags).
type Config struct {
	// MaxBytes bounds the request bytes all callers may have in flight at
	// once (each call reserves its route's limit); 0: DefaultMaxBytes.
	MaxBytes int64
	// MaxBytesPerIdentity bounds them per identity (per client address
	// for anonymous callers); admins count only against MaxBytes;
	// 0: DefaultMaxBytesPerIdentity.
	MaxBytesPerIdentity int64
	// TrustedProxies are the proxies whose X-Forwarded-For is believed
	// (CIDRs or addresses).
	TrustedProxies []string
	// HashWorkers password hashes run at once, HashQueue more wait; past
	// both a sign-in or sign-up is refused BUSY (0: DefaultHashWorkers,
	// DefaultHashQueue).
	HashWorkers, HashQueue int
}

// Defaults. MaxBytesPerIdentity lets a client send three of the largest
// gRPC messages (16 MiB) at once, or one of the largest API bodies
// (32 MiB), and keeps 64 such from one client under 200 MB of the
// coordinator's memory (TestAdmissionBoundsMemory); MaxBytes lets a few
// identities do that together. A hash takes 19 MiB (accounts), so the
// pool holds at most 2 × 19 MiB.
const (
	DefaultMaxBytes            = 192 << 20
	DefaultMaxBytesPerIdentity = 48 << 20
	DefaultHashWorkers         = 2
	DefaultHashQueue           = 8
)

// Admission is the coordinator's admission: its route table, byte budget,
// hashing pool and trusted proxies. Safe for concurrent use.
type Admission struct {
	Table   *Table
	Budget  *Budget
	Hashing *Pool
	Proxies *Proxies
	refused *prometheus.CounterVec
}

// New makes the coordinator's admission; its metrics go to reg (nil:
// none).
func New(cfg Config, reg prometheus.Registerer) (*Admission, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	proxies, err := ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	a := &Admission{Table: NewTable(), Budget: NewBudget(cfg.MaxBytes, cfg.MaxBytesPerIdentity),
		Hashing: NewPool(cfg.HashWorkers, cfg.HashQueue), Proxies: proxies,
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_admission_refused_total",
			Help: "Requests refused by admission before their body was read, by door and reason."}, []string{"door", "reason"})}
	if reg != nil {
		inflight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "arbiter_admission_reserved_bytes",
			Help: "Request bytes reserved by calls in flight (each reserves its route's limit until it is done)."},
			func() float64 { return float64(a.Budget.Used()) })
		hashing := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "arbiter_admission_hashing",
			Help: "Password hashes running or waiting in the hashing pool."},
			func() float64 { return float64(a.Hashing.InUse()) })
		reg.MustRegister(a.refused, inflight, hashing)
		for _, door := range []Door{GRPC, API, Web} {
			for _, reason := range RefusalReasons {
				a.refused.WithLabelValues(string(door), reason)
			}
		}
	}
	return a, nil
}

// Validate checks the operator's settings.
func (c Config) Validate() error {
	d := c.withDefaults()
	switch {
	case c.MaxBytes < 0:
		return fmt.Errorf("--max-request-bytes %d: must be positive", c.MaxBytes)
	case c.MaxBytesPerIdentity < 0:
		return fmt.Errorf("--max-request-bytes-per-identity %d: must be positive", c.MaxBytesPerIdentity)
	case d.MaxBytesPerIdentity < LargestRoute:
		return fmt.Errorf("--max-request-bytes-per-identity %d: must be at least %d, the largest route's limit (else that route can never be called)",
			d.MaxBytesPerIdentity, LargestRoute)
	case d.MaxBytes < d.MaxBytesPerIdentity:
		return fmt.Errorf("--max-request-bytes %d: must be at least --max-request-bytes-per-identity (%d)", d.MaxBytes, d.MaxBytesPerIdentity)
	case c.HashWorkers < 0 || c.HashWorkers > 64:
		return fmt.Errorf("--hash-workers %d: must be between 1 and 64", c.HashWorkers)
	case c.HashQueue < 0 || c.HashQueue > 4096:
		return fmt.Errorf("--hash-queue %d: must be between 0 and 4096", c.HashQueue)
	}
	_, err := ParseProxies(c.TrustedProxies)
	return err
}

func (c Config) withDefaults() Config {
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxBytesPerIdentity == 0 {
		c.MaxBytesPerIdentity = DefaultMaxBytesPerIdentity
	}
	if c.HashWorkers == 0 {
		c.HashWorkers = DefaultHashWorkers
	}
	if c.HashQueue == 0 {
		c.HashQueue = DefaultHashQueue
	}
	return c
}

// RefusalReasons are the reasons admission refuses for (the label values
// of arbiter_admission_refused_total, exported at zero from the start).
var RefusalReasons = []string{apierr.ReasonBadCredential, apierr.ReasonWrongRole, apierr.ReasonTooLarge, apierr.ReasonBusy, "CSRF", "UNKNOWN_METHOD"}

// Refused counts a refusal at door for reason.
func (a *Admission) Refused(door Door, reason string) {
	if a != nil && a.refused != nil {
		a.refused.WithLabelValues(string(door), reason).Inc()
	}
}

// ClientAddr is the address of the caller of a request that arrived from
// peer (host:port or host) with X-Forwarded-For values xff: the peer,
// unless the peer is a trusted proxy (then the nearest address in xff
// that is not one).
func (a *Admission) ClientAddr(peer string, xff []string) string {
	if a == nil {
		return (*Proxies)(nil).ClientAddr(peer, xff)
	}
	return a.Proxies.ClientAddr(peer, xff)
}
