// Package leader elects the one coordinator, among several sharing a
// PostgreSQL store, that serves the cluster; the others follow and take
// over when it goes.
//
// How: each coordinator keeps one connection of its own (not the store's
// pool) and tries pg_try_advisory_lock on it every Interval. The holder of
// the lock leads: in one transaction it raises the term of the leader row
// (store.leader.go) and names itself, then fences the store with that term,
// so every write transaction of its checks the term inside itself. The
// server releases the lock when the session ends: at once when the process
// dies (the kernel closes its socket), after idle_session_timeout (set to
// Timeout on the session) when the process is paused or cut off.
//
// Invariants:
//   - A coordinator serves (Campaign returned) only with the lock taken and
//     the term raised by itself; its writes commit only while the row still
//     carries that term, whatever its clock or its scheduler did.
//   - A leader that cannot confirm its lock on the server for Timeout/2
//     gives up (Lost closes): by then the server may have ended its session
//     and another may lead. A leader whose session broke takes the lock
//     again only if the term is still its own (nobody led in between), and
//     continues under a new term; otherwise it has lost.
//   - Lost is final: the process that lost stops serving and exits, and a
//     new process (restarted by its supervisor) starts as a follower. Its
//     memory (leases, job state) is never trusted after someone else led.
package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// lockKey is the advisory lock's second key (the first is the store's
// application id); migrations use the one-key form, a separate space.
const lockKey = 1

// DefaultTimeout is how long a leader may go unconfirmed before another
// may take over (Config.Timeout).
const DefaultTimeout = 10 * time.Second

// Config tunes an Elector. Zero values take the defaults.
type Config struct {
	// Store is the PostgreSQL store the coordinators share.
	Store *store.Store
	// ID names this coordinator in the leader row (host/pid-random by
	// default).
	ID string
	// Timeout: a leader unconfirmed this long has lost (its session is
	// ended by the server after Timeout; it stops serving after Timeout/2).
	Timeout time.Duration
	// Interval is how often the lock is tried or confirmed (Timeout/10).
	Interval time.Duration
	Logger   *zap.Logger
	// Registerer receives the election's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// Role is a coordinator's part in the election.
type Role string

// Roles.
const (
	Follower Role = "follower"
	Leading  Role = "leader"
	Gone     Role = "lost" // led, and lost it: stopping
)

// Status is what the election knows now.
type Status struct {
	Role Role
	// Term is the leader row's term as last read (this coordinator's own
	// while it leads).
	Term int64
	// Leader names the coordinator the row names, and its addresses.
	Leader, LeaderGRPC, LeaderHTTP string
	// DBErr is the last check's failure (nil: the database answered).
	DBErr error
	// Checked is when the database last answered.
	Checked time.Time
}

// Elector runs one coordinator's side of the election.
type Elector struct {
	cfg Config
	log *zap.Logger
	m   metrics

	mu        sync.Mutex // held across a check's round trips
	st        Status
	pub       atomic.Pointer[Status] // st as of the last change, for Status without waiting on mu
	conn      *pgx.Conn
	confirmed time.Time // when the lock was last confirmed held (leading)
	won       chan struct{}
	checked   chan struct{} // closed after the first check
	lost      chan struct{}
	lostOnce  sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
}

// New starts following: it checks the database every Interval (and so
// measures it) and tries the lock; Campaign waits for the lead.
func New(cfg Config) (*Elector, error) {
	if cfg.Store == nil || cfg.Store.PostgresConfig() == nil {
		return nil, errors.New("leader: an election needs a PostgreSQL store")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Timeout < time.Second {
		return nil, fmt.Errorf("leader: timeout %v: must be at least 1s (the server counts idle_session_timeout in milliseconds, the check runs every tenth)", cfg.Timeout)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = cfg.Timeout / 10
	}
	if cfg.ID == "" {
		host, _ := os.Hostname()
		// The pid tells processes of one host apart, the suffix electors
		// of one process (tests).
		suffix := make([]byte, 2)
		rand.Read(suffix)
		cfg.ID = host + "/" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(suffix)
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	cfg.Store.SetFenceTimeout(cfg.Timeout)
	e := &Elector{cfg: cfg, log: cfg.Logger, m: newMetrics(cfg.Registerer), st: Status{Role: Follower},
		won: make(chan struct{}), checked: make(chan struct{}), lost: make(chan struct{}), done: make(chan struct{})}
	e.publish()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go e.run(ctx)
	return e, nil
}

// ID is this coordinator's name in the leader row.
func (e *Elector) ID() string { return e.cfg.ID }

// Campaign waits until this coordinator leads, and returns its term.
func (e *Elector) Campaign(ctx context.Context) (int64, error) {
	select {
	case <-e.won:
		return e.Status().Term, nil
	case <-e.lost:
		return 0, errors.New("leader: lost")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Checked is closed once the database first answered a check: a
// coordinator that found the lock free leads by then.
func (e *Elector) Checked() <-chan struct{} { return e.checked }

// Lost is closed once this coordinator, having led, has lost the lead (or
// the elector was closed).
func (e *Elector) Lost() <-chan struct{} { return e.lost }

// Status is the election's state as of the last check (it never waits
// on the database).
func (e *Elector) Status() Status { return *e.pub.Load() }

// publish makes st what Status returns. Caller holds mu.
func (e *Elector) publish() {
	st := e.st
	e.pub.Store(&st)
}

// Advertise records, while this coordinator leads, where it serves, so
// that followers can name it.
func (e *Elector) Advertise(ctx context.Context, grpcAddr, httpAddr string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.Role != Leading || e.conn == nil {
		return errors.New("leader: not leading")
	}
	tag, err := e.conn.Exec(ctx, "UPDATE arbiter_leader SET grpc_addr=$1, http_addr=$2 WHERE id=1 AND term=$3", grpcAddr, httpAddr, e.st.Term)
	if err != nil {
		return fmt.Errorf("leader: advertise: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return store.ErrFenced
	}
	e.st.LeaderGRPC, e.st.LeaderHTTP = grpcAddr, httpAddr
	e.publish()
	return nil
}

// Close gives up: the lock's session is closed (the server releases the
// lock at once) and a leader's store is fenced off.
func (e *Elector) Close() {
	e.cancel()
	<-e.done
}

func (e *Elector) run(ctx context.Context) {
	defer close(e.done)
	defer func() {
		e.mu.Lock()
		if e.st.Role == Leading {
			// Closed by its coordinator (shutting down): give the lead
			// up quietly; the session's end releases the lock.
			e.cfg.Store.Fence(-1)
			e.st.Role = Gone
			e.m.leader.Set(0)
			e.log.Info("leader: lead given up", zap.Int64("term", e.st.Term))
			e.publish()
		}
		if e.conn != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			e.conn.Close(cctx)
			cancel()
			e.conn = nil
		}
		e.mu.Unlock()
		e.lostOnce.Do(func() { close(e.lost) })
	}()
	t := time.NewTicker(e.cfg.Interval)
	defer t.Stop()
	first := true
	for {
		e.step(ctx)
		if first && e.Status().DBErr == nil {
			close(e.checked)
			first = false
		}
		if e.Status().Role == Gone {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// step is one check: read the row (measuring the database), then try the
// lock as a follower or confirm it as the leader.
func (e *Elector) step(ctx context.Context) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.publish()
	cctx, cancel := context.WithTimeout(ctx, e.checkTimeout())
	defer cancel()
	err := e.check(cctx)
	now := time.Now()
	if err != nil {
		e.st.DBErr = err
		e.m.dbUp.Set(0)
		if e.conn != nil {
			e.conn.Close(context.Background())
			e.conn = nil
		}
		if e.st.Role == Leading && now.Sub(e.confirmed) > e.cfg.Timeout/2 {
			e.loseLocked(fmt.Sprintf("lock not confirmed for %v: %v", now.Sub(e.confirmed).Round(time.Millisecond), err))
		}
		return
	}
	e.st.DBErr, e.st.Checked = nil, now
	e.m.dbUp.Set(1)
}

// check runs one round on the session (connecting first if needed).
// Caller holds mu.
func (e *Elector) check(ctx context.Context) error {
	reconnected := false
	if e.conn == nil {
		conn, err := e.connect(ctx)
		if err != nil {
			return err
		}
		e.conn, reconnected = conn, true
	}
	start := time.Now()
	var term int64
	var holder, grpcAddr, httpAddr string
	err := e.conn.QueryRow(ctx, "SELECT term, holder, grpc_addr, http_addr FROM arbiter_leader WHERE id=1").Scan(&term, &holder, &grpcAddr, &httpAddr)
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return err
	}
	e.m.latency.Observe(time.Since(start).Seconds())
	if term != e.st.Term && e.st.Term != 0 {
		e.m.changes.Inc()
	}
	switch e.st.Role {
	case Follower:
		e.st.Term, e.st.Leader, e.st.LeaderGRPC, e.st.LeaderHTTP = term, holder, grpcAddr, httpAddr
		return e.tryLead(ctx)
	case Leading:
		if term != e.st.Term {
			e.loseLocked(fmt.Sprintf("the leader row's term is %d (%s), ours was %d", term, holder, e.st.Term))
			return nil
		}
		if reconnected {
			// The session that held the lock broke (a database restart,
			// a cut connection): take it again, and lead on only if
			// nobody led in between.
			return e.relock(ctx)
		}
		e.confirmed = time.Now()
	}
	return nil
}

// checkTimeout bounds one check, connecting included: three intervals,
// or half the timeout if that is more (a loaded server or machine is not
// a lost lead by itself; an unconfirmed one past half the timeout is).
func (e *Elector) checkTimeout() time.Duration { return max(e.cfg.Interval*3, e.cfg.Timeout/2) }

// connect opens the election's own session: server-side limits make the
// server end it (and so release the lock) when this process stops
// answering, paused or cut off.
func (e *Elector) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg := e.cfg.Store.PostgresConfig()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	ms := strconv.FormatInt(e.cfg.Timeout.Milliseconds(), 10)
	secs := strconv.Itoa(max(1, int(e.cfg.Timeout.Seconds()/4)))
	cfg.RuntimeParams["application_name"] = "arbiter-election " + e.cfg.ID
	cfg.RuntimeParams["idle_session_timeout"] = ms
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = ms
	cfg.RuntimeParams["tcp_keepalives_idle"] = secs
	cfg.RuntimeParams["tcp_keepalives_interval"] = secs
	cfg.RuntimeParams["tcp_keepalives_count"] = "2"
	cfg.ConnectTimeout = e.checkTimeout()
	return pgx.ConnectConfig(ctx, cfg)
}

// tryLead takes the lock if it is free and becomes leader. Caller holds mu.
func (e *Elector) tryLead(ctx context.Context) error {
	var got bool
	if err := e.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", store.ApplicationID, lockKey).Scan(&got); err != nil || !got {
		return err
	}
	term, err := e.raise(ctx, 0, "", "")
	if err != nil {
		// Give the lock back with the session: nothing was changed.
		return err
	}
	e.lead(term, "took the lock")
	return nil
}

// relock takes the lock again on a new session after the old one broke.
// Caller holds mu.
func (e *Elector) relock(ctx context.Context) error {
	var got bool
	if err := e.conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, $2)", store.ApplicationID, lockKey).Scan(&got); err != nil {
		return err
	}
	if !got {
		e.loseLocked("the lock is held by another coordinator since our session broke")
		return nil
	}
	// The same process serves at the same addresses: the row keeps them,
	// or followers would find no leader to relay to until it restarted.
	term, err := e.raise(ctx, e.st.Term, e.st.LeaderGRPC, e.st.LeaderHTTP)
	if errors.Is(err, store.ErrFenced) {
		e.loseLocked("another coordinator led while our session was broken")
		return nil
	}
	if err != nil {
		return err
	}
	e.log.Info("leader: lock taken again after the session broke", zap.Int64("term", term))
	e.st.Term = term
	e.cfg.Store.Fence(term)
	e.m.term.Set(float64(term))
	e.confirmed = time.Now()
	return nil
}

// raise makes this coordinator the row's holder with the term raised by
// one, serving at grpcAddr and httpAddr ("": not yet, see Advertise);
// with from > 0 only if the term is still from (else store.ErrFenced).
func (e *Elector) raise(ctx context.Context, from int64, grpcAddr, httpAddr string) (int64, error) {
	tx, err := e.conn.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "INSERT INTO arbiter_leader(id, term, holder, grpc_addr, http_addr, since) VALUES (1, 0, '', '', '', 0) ON CONFLICT DO NOTHING"); err != nil {
		return 0, err
	}
	q := "UPDATE arbiter_leader SET term=term+1, holder=$1, grpc_addr=$3, http_addr=$4, since=$2 WHERE id=1"
	args := []any{e.cfg.ID, time.Now().UnixNano(), grpcAddr, httpAddr}
	if from > 0 {
		q += " AND term=$5"
		args = append(args, from)
	}
	var term int64
	err = tx.QueryRow(ctx, q+" RETURNING term", args...).Scan(&term)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, store.ErrFenced
	}
	if err != nil {
		return 0, err
	}
	return term, tx.Commit(ctx)
}

// lead records the lead. Caller holds mu.
func (e *Elector) lead(term int64, why string) {
	e.cfg.Store.Fence(term)
	if e.st.Term != term {
		e.m.changes.Inc()
	}
	e.st.Role, e.st.Term, e.st.Leader, e.st.LeaderGRPC, e.st.LeaderHTTP = Leading, term, e.cfg.ID, "", ""
	e.confirmed = time.Now()
	e.m.leader.Set(1)
	e.m.term.Set(float64(term))
	e.log.Info("leader: this coordinator leads", zap.Int64("term", term), zap.String("id", e.cfg.ID), zap.String("why", why))
	e.publish()
	close(e.won)
}

// loseLocked ends the lead for good: every later write of the store is
// refused. Caller holds mu.
func (e *Elector) loseLocked(why string) {
	e.cfg.Store.Fence(-1)
	e.st.Role = Gone
	e.m.leader.Set(0)
	e.log.Error("leader: this coordinator no longer leads; it stops serving", zap.Int64("term", e.st.Term), zap.String("why", why))
	e.publish()
	e.lostOnce.Do(func() { close(e.lost) })
}

type metrics struct {
	leader  prometheus.Gauge
	term    prometheus.Gauge
	changes prometheus.Counter
	dbUp    prometheus.Gauge
	latency prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arbiter_coordinator_leader",
			Help: "1 while this coordinator leads (serves workers and clients), 0 while it follows."}),
		term: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arbiter_coordinator_leader_term",
			Help: "The leader term this coordinator last read from the database (its own while it leads)."}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_coordinator_leadership_changes_total",
			Help: "Changes of leader (term) this coordinator has seen, its own takeovers included."}),
		dbUp: prometheus.NewGauge(prometheus.GaugeOpts{Name: "arbiter_coordinator_database_up",
			Help: "1 when the coordinator's last check of the database (every election interval) was answered."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "arbiter_coordinator_database_latency_seconds",
			Help:    "Round trip of the election's check query to the database.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}}),
	}
	if reg != nil {
		reg.MustRegister(m.leader, m.term, m.changes, m.dbUp, m.latency)
	}
	return m
}
