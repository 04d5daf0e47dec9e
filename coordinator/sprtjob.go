package coordinator

// Match and SPRT tests on the cluster.
//
// A test is a job (kind "sprt" or "match") whose units are batches of game
// pairs. Batch i holds pairs [i×B, i×B+n) of the test, and pair k plays
// opening k mod len(openings) of the book in the order fixed by the test's
// book order and seed (match.OrderOpenings), so which games a batch holds is
// a function of the test alone: a test is reproducible and a batch re-issued
// after a dead worker plays the same openings.
//
// Invariants:
//   - A batch is counted once: the store's batches table has the unit id as
//     primary key; a second result for a counted batch is compared and
//     reported as a duplicate, never added. Results (counts, PGNs, the new
//     SPRT state and, when it decides, the job's final state) are committed
//     in one transaction before the worker is acknowledged.
//   - The SPRT (sprt.Sequential, batch size B pairs) sees the cumulative
//     results after every accepted batch, in acceptance order; its state is
//     stored with each batch, so a restarted coordinator resumes it exactly.
//   - Leases live in memory only: after a restart every batch not counted
//     is open again (a worker still playing one gets its lease back on its
//     next heartbeat).
//   - When a test ends (decided, all games played, cancelled) its leases
//     end; heartbeats then tell workers to stop (LEASE_STATE_CANCELLED) and
//     late results are discarded.
//
// Scheduling: a worker asks for work; perft units come first (they are
// short), then test batches: among running tests with a batch this worker
// may play, the highest priority wins, and among equal priorities the test
// furthest below its throughput share (share of leased batches against
// share of throughput weights).
//
// Time controls are scaled per worker like Fishtest: clock and move time ×
// reference_nps / worker_bench_nps (clamped to [1/10, 10]); node and depth
// limits are never scaled. Batch size (pairs) is fixed per test, because the
// SPRT's overshoot correction assumes equal batches: it is chosen at submit
// so that a batch takes about GameConfig.BatchDuration on a worker of the
// reference speed (which, with scaled clocks, is every worker).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/coordinator/lease"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/logging"
	"github.com/arbiter-chess/arbiter/internal/matchspec"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Job kinds of tests.
const (
	KindSPRT  = "sprt"
	KindMatch = "match"
)

func isTestKind(k string) bool { return k == KindSPRT || k == KindMatch }

// GameConfig tunes tests. Zero values take the defaults.
type GameConfig struct {
	// ReferenceNPS is the bench speed (nodes/s, one thread, `arbiter
	// bench`-equivalent) that a test's clock is meant for, when the test
	// does not give one (DefaultReferenceNPS).
	ReferenceNPS uint64
	// BatchDuration is the wall time a batch should take (30s).
	BatchDuration time.Duration
	// MaxBatchPairs bounds automatic batch sizes (32).
	MaxBatchPairs int
	// IncidentWindow is the number of a worker's most recent games of a test
	// over which its incident rate is judged (40), once it has played half
	// of them.
	IncidentWindow int
	// IncidentMaxRate is the share of those games with a worker-caused
	// incident (time loss, hang, lost lease) above which the worker gets no
	// more batches of the test (0.2).
	IncidentMaxRate float64
}

// DefaultReferenceNPS is the bench nps of the development machine (2 cores,
// `arbiter bench --depth 8`-like one-thread speed): tests that name no
// reference speed are scaled to it.
const DefaultReferenceNPS = 2_000_000

func (g GameConfig) refNPS() uint64 {
	if g.ReferenceNPS > 0 {
		return g.ReferenceNPS
	}
	return DefaultReferenceNPS
}

func (g GameConfig) batchDuration() time.Duration {
	if g.BatchDuration > 0 {
		return g.BatchDuration
	}
	return 30 * time.Second
}

func (g GameConfig) maxBatchPairs() int {
	if g.MaxBatchPairs > 0 {
		return g.MaxBatchPairs
	}
	return 32
}

func (g GameConfig) window() int {
	if g.IncidentWindow > 0 {
		return g.IncidentWindow
	}
	return 40
}

func (g GameConfig) maxRate() float64 {
	if g.IncidentMaxRate > 0 {
		return g.IncidentMaxRate
	}
	return 0.2
}

// gameSched is the coordinator's view of workers for tests.
type gameSched struct {
	workers map[string]*gameWorker
}

type gameWorker struct {
	name     string
	games    bool // can play game pairs
	benchNPS uint64
	benchSig uint64
	cores    uint32
}

// testState is a test in memory. Caller holds c.mu for every access.
type testState struct {
	spec       *arbiterv1.MatchSpec // as stored (openings in file order)
	openings   []*arbiterv1.Opening // in the order of play
	limits     match.Limits         // reference limits
	params     *sprt.Params
	seq        *sprt.Sequential
	batchPairs int
	totalPairs int // 0: unbounded (SPRT without a cap)
	next       int // next batch never leased
	retry      []int
	done       map[int]*store.Batch
	open       map[int]time.Time // leased, not counted: when the lease was granted
	results    sprt.Results
	penta      sprt.Pentanomial
	pgns       int64
	workers    map[string]*testWorker
	refused    map[string]string // workers that cannot run the test: why
}

type testWorker struct {
	games     int64
	incidents map[string]int64 // by incident class
	window    []windowEntry
	excluded  bool
	reason    string
}

type windowEntry struct{ games, bad int }

// Incident classes counted per worker (stored in a batch's incidents).
const (
	incTimeLoss   = "time_loss"
	incCrash      = "crash"
	incIllegal    = "illegal"
	incHang       = "hang"
	incDisconnect = "disconnect"
	incOther      = "other"
	incOverrun    = "overrun"
)

func (t *testState) batchCount() int {
	if t.totalPairs == 0 {
		return math.MaxInt
	}
	return (t.totalPairs + t.batchPairs - 1) / t.batchPairs
}

// pairsOf is the first pair and pair count of batch idx.
func (t *testState) pairsOf(idx int) (first, n int) {
	first = idx * t.batchPairs
	n = t.batchPairs
	if t.totalPairs > 0 {
		n = min(n, t.totalPairs-first)
	}
	return first, n
}

func (t *testState) worker(id string) *testWorker {
	tw := t.workers[id]
	if tw == nil {
		tw = &testWorker{incidents: map[string]int64{}}
		t.workers[id] = tw
	}
	return tw
}

// ---- worker registration ----

func (c *Coordinator) sched() *gameSched {
	if c.games == nil {
		c.games = &gameSched{workers: map[string]*gameWorker{}}
	}
	return c.games
}

// gameRegister records what a registering worker can do. Caller holds mu.
func (c *Coordinator) gameRegister(id, name string, caps *arbiterv1.WorkerCapabilities) {
	gw := &gameWorker{name: name, benchNPS: caps.GetBenchNps(), benchSig: caps.GetBenchSignature(), cores: caps.GetCores()}
	for _, k := range caps.GetCapabilities() {
		if k == "game-pair" {
			gw.games = true
		}
	}
	c.sched().workers[id] = gw
}

// gameLoadWorker restores a worker from the store (its capabilities JSON).
func (c *Coordinator) gameLoadWorker(w store.Worker) {
	var caps struct {
		Cores        uint32   `json:"cores"`
		Capabilities []string `json:"capabilities"`
		BenchNPS     uint64   `json:"bench_nps"`
		BenchSig     uint64   `json:"bench_signature"`
	}
	json.Unmarshal([]byte(w.Capabilities), &caps)
	c.gameRegister(w.ID, w.Name, &arbiterv1.WorkerCapabilities{Cores: caps.Cores, Capabilities: caps.Capabilities,
		BenchNps: caps.BenchNPS, BenchSignature: caps.BenchSig})
}

// timeScale is reference / worker speed, clamped; 1 when either is unknown.
func (c *Coordinator) timeScale(j *jobState, worker string) float64 {
	gw := c.sched().workers[worker]
	ref := j.test.spec.GetReferenceNps()
	if ref == 0 {
		ref = c.cfg.Games.refNPS()
	}
	if gw == nil || gw.benchNPS == 0 {
		return 1
	}
	return min(max(float64(ref)/float64(gw.benchNPS), 0.1), 10)
}

// ---- submit ----

// SubmitMatch implements JobService.
func (s *JobServer) SubmitMatch(ctx context.Context, req *arbiterv1.SubmitMatchRequest) (*arbiterv1.SubmitMatchResponse, error) {
	j, err := s.c.SubmitMatch(ctx, req.GetSpec())
	if err != nil {
		return nil, err
	}
	return &arbiterv1.SubmitMatchResponse{Job: j}, nil
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// checkSpec validates a test and fills in its defaults. Every refusal names
// the input.
func (c *Coordinator) checkSpec(spec *arbiterv1.MatchSpec) (*testState, error) {
	if spec == nil {
		return nil, invalid("spec missing")
	}
	for i, e := range []*arbiterv1.EngineSpec{spec.GetEngineA(), spec.GetEngineB()} {
		which := [2]string{"engine_a", "engine_b"}[i]
		if e == nil {
			return nil, invalid("%s missing", which)
		}
		if strings.TrimSpace(e.GetName()) == "" || len(e.GetName()) > 200 {
			return nil, invalid("%s: name missing or longer than 200 bytes", which)
		}
		switch {
		case matchspec.IsBuiltin(e):
			if err := matchspec.CheckBuiltinOptions(e.GetName(), e.GetOptions()); err != nil {
				return nil, invalid("%s: %v", which, err)
			}
		case e.GetCommand() == "":
			return nil, invalid("%s %q: command missing (a UCI binary on the workers, or %q)", which, e.GetName(), matchspec.Embedded)
		default:
			switch e.GetProtocol() {
			case "", "uci", "xboard":
			default:
				return nil, invalid("%s %q: protocol %q (want uci, xboard or builtin)", which, e.GetName(), e.GetProtocol())
			}
		}
		for k := range e.GetOptions() {
			if strings.TrimSpace(k) == "" {
				return nil, invalid("%s %q: option with an empty name", which, e.GetName())
			}
		}
	}
	if spec.GetEngineA().GetName() == spec.GetEngineB().GetName() {
		return nil, invalid("both engines are named %q", spec.GetEngineA().GetName())
	}
	lim, err := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
	if err != nil {
		return nil, invalid("time control: %v", err)
	}
	if err := matchspec.CheckPlayable(lim); err != nil {
		return nil, invalid("time control: %v", err)
	}
	if len(spec.GetOpenings()) == 0 {
		return nil, invalid("openings: none given")
	}
	if len(spec.GetOpenings()) > 1_000_000 {
		return nil, invalid("openings: %d is more than 1,000,000", len(spec.GetOpenings()))
	}
	book := make([]match.Opening, len(spec.GetOpenings()))
	for i, o := range spec.GetOpenings() {
		op, err := matchspec.OpeningFromProto(o, spec.GetChess960())
		if err != nil {
			return nil, invalid("openings (%s): %v", spec.GetBookName(), err)
		}
		op.ID = i // index in the book as sent (file order)
		book[i] = op
	}
	ordered, err := match.OrderOpenings(book, spec.GetBookOrder(), spec.GetSeed(), int(spec.GetBookStart()))
	if err != nil {
		return nil, invalid("openings: %v", err)
	}
	t := &testState{limits: lim, done: map[int]*store.Batch{}, open: map[int]time.Time{},
		workers: map[string]*testWorker{}, refused: map[string]string{}}
	for _, op := range ordered {
		o := spec.GetOpenings()[op.ID]
		t.openings = append(t.openings, &arbiterv1.Opening{Index: o.GetIndex(), Fen: o.GetFen(), MovesUci: o.GetMovesUci()})
	}
	games := spec.GetGames()
	if games%2 != 0 {
		return nil, invalid("games: %d is odd (games are played in pairs)", games)
	}
	if games > 100_000_000 {
		return nil, invalid("games: %d is more than 100,000,000", games)
	}
	if sp := spec.GetSprt(); sp != nil {
		p := sprt.Params{Elo0: sp.GetElo0(), Elo1: sp.GetElo1(), Alpha: sp.GetAlpha(), Beta: sp.GetBeta(), Model: sprt.Normalized}
		if p.Alpha == 0 {
			p.Alpha = 0.05
		}
		if p.Beta == 0 {
			p.Beta = 0.05
		}
		if sp.GetModel() != "" {
			if p.Model, err = sprt.ParseModel(sp.GetModel()); err != nil {
				return nil, invalid("sprt: %v", err)
			}
		}
		if err := p.Validate(); err != nil {
			return nil, invalid("sprt: %v", err)
		}
		sp.Alpha, sp.Beta, sp.Model = p.Alpha, p.Beta, string(p.Model)
		t.params = &p
	} else if games == 0 {
		return nil, invalid("give a number of games or SPRT bounds")
	}
	t.totalPairs = int(games / 2)
	if math.IsNaN(spec.GetThroughput()) || spec.GetThroughput() < 0 || spec.GetThroughput() > 1e6 {
		return nil, invalid("throughput %v: must be between 0 and 1e6", spec.GetThroughput())
	}
	if spec.GetThroughput() == 0 {
		spec.Throughput = 1
	}
	if spec.GetBatchPairs() > 10_000 {
		return nil, invalid("batch pairs %d: at most 10000", spec.GetBatchPairs())
	}
	if spec.GetBatchPairs() == 0 {
		ref := spec.GetReferenceNps()
		if ref == 0 {
			ref = c.cfg.Games.refNPS()
		}
		pairSecs := 2 * matchspec.GameSeconds(lim, float64(ref))
		n := int(math.Round(c.cfg.Games.batchDuration().Seconds() / pairSecs))
		spec.BatchPairs = uint32(min(max(n, 1), c.cfg.Games.maxBatchPairs()))
	}
	t.batchPairs = int(spec.GetBatchPairs())
	if t.totalPairs > 0 && t.batchPairs > t.totalPairs {
		t.batchPairs = t.totalPairs
		spec.BatchPairs = uint32(t.totalPairs)
	}
	if spec.GetTimeMargin().AsDuration() < 0 || spec.GetHangTimeout().AsDuration() < 0 {
		return nil, invalid("time margin and hang timeout must not be negative")
	}
	if t.params != nil {
		if t.seq, err = sprt.NewSequential(*t.params, int64(t.batchPairs)); err != nil {
			return nil, invalid("sprt: %v", err)
		}
	}
	t.spec = spec
	return t, nil
}

// SubmitMatch validates and stores a match or SPRT test. Nothing is stored
// when the spec is refused.
func (c *Coordinator) SubmitMatch(ctx context.Context, spec *arbiterv1.MatchSpec) (*arbiterv1.Job, error) {
	spec = proto.Clone(spec).(*arbiterv1.MatchSpec)
	t, err := c.checkSpec(spec)
	if err != nil {
		c.log.Info("test refused", zap.Error(err))
		return nil, err
	}
	kind := KindMatch
	if t.params != nil {
		kind = KindSPRT
	}
	id := "s" + randomHex(6)
	now := c.cfg.Now()
	specBytes, err := proto.Marshal(spec)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encode spec: %v", err)
	}
	rec := &store.Job{ID: id, Kind: kind, State: store.StateRunning, CreatedAt: now, Chess960: spec.GetChess960(), RootMoves: []string{}}
	if t.totalPairs > 0 {
		rec.UnitsTotal = t.batchCount()
	}
	trow := &store.Test{JobID: id, Spec: specBytes, BatchPairs: t.batchPairs, SPRT: seqJSON(t.seq)}
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	if err := c.store.CreateTest(ctx, rec, trow); err != nil {
		return nil, status.Errorf(codes.Unavailable, "store: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	j := &jobState{rec: rec, changed: make(chan struct{}), started: now, test: t}
	c.jobs[id] = j
	c.order = append(c.order, j)
	c.signalWork()
	c.log.Info("test submitted", zap.String(logging.JobID, id), zap.String("kind", kind),
		zap.String("engine_a", spec.GetEngineA().GetName()), zap.String("engine_b", spec.GetEngineB().GetName()),
		zap.String("limits", t.limits.String()), zap.Int("openings", len(t.openings)), zap.Int("batch_pairs", t.batchPairs),
		zap.Int("pairs", t.totalPairs), zap.Int32("priority", spec.GetPriority()), zap.Float64("throughput", spec.GetThroughput()))
	return c.jobProto(j, true), nil
}

func seqJSON(s *sprt.Sequential) string {
	if s == nil {
		return ""
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// loadTest rebuilds a test from the store: spec, counted batches, SPRT.
func (c *Coordinator) loadTest(ctx context.Context, j *jobState) error {
	id := j.rec.ID
	row, err := c.store.Test(ctx, id)
	if err != nil {
		return fmt.Errorf("coordinator: test %s: %w", id, err)
	}
	spec := &arbiterv1.MatchSpec{}
	if err := proto.Unmarshal(row.Spec, spec); err != nil {
		return fmt.Errorf("coordinator: test %s spec: %w", id, err)
	}
	t, err := c.checkSpec(spec)
	if err != nil {
		return fmt.Errorf("coordinator: test %s spec no longer valid: %w", id, err)
	}
	t.batchPairs = row.BatchPairs
	if row.SPRT != "" {
		var seq sprt.Sequential
		if err := json.Unmarshal([]byte(row.SPRT), &seq); err != nil {
			return fmt.Errorf("coordinator: test %s sprt state: %w", id, err)
		}
		t.seq = &seq
	}
	batches, err := c.store.Batches(ctx, id)
	if err != nil {
		return fmt.Errorf("coordinator: test %s batches: %w", id, err)
	}
	j.test = t
	maxIdx := -1
	for i := range batches {
		b := &batches[i]
		t.done[b.Idx] = b
		c.countBatch(j, b)
		maxIdx = max(maxIdx, b.Idx)
	}
	if t.pgns, err = c.store.CountPGNs(ctx, id); err != nil {
		return err
	}
	t.next = maxIdx + 1
	for i := 0; i < t.next; i++ {
		if t.done[i] == nil {
			t.retry = append(t.retry, i)
		}
	}
	j.test = t
	j.started = c.cfg.Now()
	if j.rec.State == store.StateRunning {
		c.log.Info("test resumed", zap.String(logging.JobID, id), zap.Int("batches", len(batches)),
			zap.Int64("games", t.results.Games()), zap.Int("reopened", len(t.retry)))
	}
	return nil
}

// countBatch adds an accepted batch to the test's memory. Caller holds mu
// (or is loading).
func (c *Coordinator) countBatch(j *jobState, b *store.Batch) {
	t := j.test
	for i := range t.penta {
		t.penta[i] += b.Penta[i]
	}
	t.results.Wins += b.Wins
	t.results.Draws += b.Draws
	t.results.Losses += b.Losses
	p := t.penta
	t.results.Pentanomial = &p
	tw := t.worker(b.WorkerID)
	games := int64(2 * b.Pairs)
	tw.games += games
	inc := decodeIncidents(b.Incidents)
	bad := 0
	for k, n := range inc {
		tw.incidents[k] += n
		if k == incTimeLoss || k == incHang {
			bad += int(n)
		}
	}
	c.judgeWorker(j, b.WorkerID, int(games), bad)
}

// judgeWorker slides the worker's incident window and excludes it from the
// test when its rate of worker-caused incidents is abnormal. Crashes and
// illegal moves are the engine's, not the worker's, so they do not count.
func (c *Coordinator) judgeWorker(j *jobState, worker string, games, bad int) {
	t := j.test
	tw := t.worker(worker)
	tw.window = append(tw.window, windowEntry{games, bad})
	n, nb := 0, 0
	for i := len(tw.window) - 1; i >= 0; i-- {
		if n >= c.cfg.Games.window() {
			tw.window = tw.window[i+1:]
			break
		}
		n += tw.window[i].games
		nb += tw.window[i].bad
	}
	if tw.excluded || n < c.cfg.Games.window()/2 || n == 0 {
		return
	}
	if rate := float64(nb) / float64(n); rate > c.cfg.Games.maxRate() {
		tw.excluded = true
		tw.reason = fmt.Sprintf("%d worker-caused incidents (time losses, hangs, lost leases) in its last %d games (%.0f%% > %.0f%%)",
			nb, n, 100*rate, 100*c.cfg.Games.maxRate())
		c.log.Warn("worker excluded from test", zap.String(logging.JobID, j.rec.ID), zap.String(logging.WorkerID, worker),
			zap.String("reason", tw.reason))
	}
}

func encodeIncidents(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if m[k] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}

func decodeIncidents(s string) map[string]int64 {
	m := map[string]int64{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		m[k] += n
	}
	return m
}

// ---- leases ----

// gameUnit finds the test and batch of a unit id. Caller holds mu.
func (c *Coordinator) gameUnit(unitID string) (*jobState, int, bool) {
	i := strings.LastIndexByte(unitID, '.')
	if i < 0 {
		return nil, 0, false
	}
	j := c.jobs[unitID[:i]]
	if j == nil || j.test == nil {
		return nil, 0, false
	}
	idx, err := strconv.Atoi(unitID[i+1:])
	if err != nil || idx < 0 {
		return nil, 0, false
	}
	return j, idx, true
}

// mayPlay reports whether worker w may get batches of j.
func (c *Coordinator) mayPlay(j *jobState, w string) bool {
	gw := c.sched().workers[w]
	if gw == nil || !gw.games || j.rec.State != store.StateRunning {
		return false
	}
	t := j.test
	if _, no := t.refused[w]; no {
		return false
	}
	if tw := t.workers[w]; tw != nil && tw.excluded {
		return false
	}
	return true
}

// nextBatch returns a batch of j that wants a lease, without taking it.
func (c *Coordinator) nextBatch(j *jobState) (int, bool) {
	t := j.test
	for len(t.retry) > 0 {
		idx := t.retry[0]
		if t.done[idx] == nil && !t.leased(c, j, idx) {
			return idx, true
		}
		t.retry = t.retry[1:]
	}
	if t.next < t.batchCount() {
		return t.next, true
	}
	return 0, false
}

func (t *testState) leased(c *Coordinator, j *jobState, idx int) bool {
	return len(c.leases.ForUnit(unitID(j.rec.ID, idx))) > 0
}

// pickGame grants worker w a lease on a batch. Caller holds mu.
func (c *Coordinator) pickGame(w string, now time.Time) (*arbiterv1.Lease, bool) {
	var best *jobState
	var bestDeficit float64
	var shareSum float64
	inflight := 0
	for _, j := range c.order {
		if j.test != nil && j.rec.State == store.StateRunning {
			shareSum += j.test.spec.GetThroughput()
			inflight += len(j.test.open)
		}
	}
	for _, j := range c.order {
		if j.test == nil || !c.mayPlay(j, w) {
			continue
		}
		if _, ok := c.nextBatch(j); !ok {
			continue
		}
		deficit := j.test.spec.GetThroughput()/shareSum - float64(len(j.test.open))/float64(max(inflight, 1))
		if best == nil || j.test.spec.GetPriority() > best.test.spec.GetPriority() ||
			(j.test.spec.GetPriority() == best.test.spec.GetPriority() && deficit > bestDeficit+1e-12) {
			best, bestDeficit = j, deficit
		}
	}
	if best == nil {
		return nil, false
	}
	t := best.test
	idx, _ := c.nextBatch(best)
	if len(t.retry) > 0 && t.retry[0] == idx {
		t.retry = t.retry[1:]
	} else {
		t.next = idx + 1
	}
	l := c.leases.Grant(unitID(best.rec.ID, idx), "", w, now)
	t.open[idx] = now
	c.log.Debug("batch leased", zap.String(logging.JobID, best.rec.ID), zap.String(logging.UnitID, l.UnitID),
		zap.String(logging.WorkerID, w), zap.String(logging.LeaseID, l.ID))
	return &arbiterv1.Lease{LeaseId: l.ID, Deadline: timestamppb.New(l.Deadline), Unit: c.gameUnitProto(best, idx, w)}, true
}

// gameUnitProto renders batch idx of j for worker w. Caller holds mu.
func (c *Coordinator) gameUnitProto(j *jobState, idx int, w string) *arbiterv1.WorkUnit {
	t := j.test
	first, n := t.pairsOf(idx)
	scale := c.timeScale(j, w)
	tc := proto.Clone(t.spec.GetTimeControl()).(*arbiterv1.TimeControl)
	scaleD := func(d *durationpb.Duration) *durationpb.Duration {
		return durationpb.New(time.Duration(float64(d.AsDuration()) * scale))
	}
	switch k := tc.GetKind().(type) {
	case *arbiterv1.TimeControl_Clock:
		k.Clock.Base, k.Clock.Increment = scaleD(k.Clock.GetBase()), scaleD(k.Clock.GetIncrement())
	case *arbiterv1.TimeControl_MoveTime:
		k.MoveTime = scaleD(k.MoveTime)
	default:
		scale = 1 // node and depth limits are not scaled
	}
	ops := make([]*arbiterv1.Opening, n)
	for i := range ops {
		ops[i] = t.openings[(first+i)%len(t.openings)]
	}
	return &arbiterv1.WorkUnit{UnitId: unitID(j.rec.ID, idx), JobId: j.rec.ID, Payload: &arbiterv1.WorkUnit_GamePairs{
		GamePairs: &arbiterv1.GamePairBatch{
			TestId: j.rec.ID, Openings: ops, PairsPerOpening: 1,
			EngineA: t.spec.GetEngineA(), EngineB: t.spec.GetEngineB(), TimeControl: tc,
			Adjudication: t.spec.GetAdjudication(), Seed: t.spec.GetSeed()*1_000_003 + uint64(idx), Chess960: t.spec.GetChess960(),
			TimeScale: scale, FirstPair: uint32(first), TimeMargin: t.spec.GetTimeMargin(), HangTimeout: t.spec.GetHangTimeout(),
			Event: t.spec.GetEvent(),
		}}}
}

// gameHeartbeat answers a held lease on a batch that the lease manager no
// longer knows. ok is false when unitID is not a batch. Caller holds mu.
func (c *Coordinator) gameHeartbeat(leaseID, unitID, w string, now time.Time) (arbiterv1.LeaseState, time.Time, bool) {
	j, idx, ok := c.gameUnit(unitID)
	if !ok {
		return 0, time.Time{}, false
	}
	t := j.test
	switch {
	case j.rec.State != store.StateRunning || t.done[idx] != nil:
		return arbiterv1.LeaseState_LEASE_STATE_CANCELLED, time.Time{}, true
	case c.leaseOf(leaseID) == "" && !t.leased(c, j, idx) && c.mayPlay(j, w) && (t.totalPairs == 0 || idx < t.batchCount()):
		// A lease from before a restart (or expired a moment ago) on a batch
		// nobody else plays: give it back rather than play it twice.
		l := c.leases.Adopt(leaseID, unitID, "", w, now)
		t.open[idx] = now
		for i := t.next; i < idx; i++ {
			t.retry = append(t.retry, i)
		}
		t.next = max(t.next, idx+1)
		c.log.Info("lease adopted", zap.String(logging.LeaseID, l.ID), zap.String(logging.UnitID, unitID), zap.String(logging.WorkerID, w))
		return arbiterv1.LeaseState_LEASE_STATE_ACTIVE, l.Deadline, true
	}
	return arbiterv1.LeaseState_LEASE_STATE_LOST, time.Time{}, true
}

// reopen puts a batch whose lease ended without a result back in line.
// Caller holds mu.
func (c *Coordinator) reopen(j *jobState, idx int) {
	t := j.test
	if t.done[idx] != nil || t.leased(c, j, idx) {
		return
	}
	delete(t.open, idx)
	if j.rec.State == store.StateRunning {
		t.retry = append(t.retry, idx)
		c.signalWork()
	}
}

// gameLeaseExpired is the expiry hook: the worker vanished mid-batch (a
// disconnect incident) and the batch is open again. Caller holds mu.
func (c *Coordinator) gameLeaseExpired(l lease.Lease) {
	j, idx, ok := c.gameUnit(l.UnitID)
	if !ok {
		return
	}
	if j.rec.State == store.StateRunning && j.test.done[idx] == nil {
		j.test.worker(l.WorkerID).incidents[incDisconnect]++
		c.judgeWorker(j, l.WorkerID, 0, 0)
	}
	c.reopen(j, idx)
}

// gameReleased is the release hook. cannotRun marks the worker as unable to
// run the test (an engine missing on it): it gets no more of its batches.
// Caller holds mu.
func (c *Coordinator) gameReleased(l lease.Lease, reason string, cannotRun bool) {
	j, idx, ok := c.gameUnit(l.UnitID)
	if !ok {
		return
	}
	if cannotRun {
		if _, seen := j.test.refused[l.WorkerID]; !seen {
			c.log.Warn("worker cannot run test; not offering it again", zap.String(logging.JobID, j.rec.ID),
				zap.String(logging.WorkerID, l.WorkerID), zap.String("reason", reason))
		}
		j.test.refused[l.WorkerID] = reason
	}
	c.reopen(j, idx)
}

// gameFinal ends every lease of a finished test. Caller holds mu.
func (c *Coordinator) gameFinal(j *jobState) {
	if j.test == nil {
		return
	}
	for idx := range j.test.open {
		for _, l := range c.leases.ForUnit(unitID(j.rec.ID, idx)) {
			c.leases.End(l.ID)
		}
	}
	clear(j.test.open)
	j.test.retry = nil
}

// ---- results ----

// checkBatchResult refuses a result whose shape does not fit the batch:
// counts that do not add up to the pairs played, a pentanomial that does not
// match the W/D/L, a PGN count that differs from the games.
func checkBatchResult(unit string, pairs int, r *arbiterv1.GamePairBatchResult) (sprt.Results, error) {
	p := r.GetPentanomial()
	if p == nil {
		return sprt.Results{}, fmt.Errorf("unit %s: pentanomial missing", unit)
	}
	penta := sprt.Pentanomial{int64(p.GetLl()), int64(p.GetLd()), int64(p.GetDd()), int64(p.GetWd()), int64(p.GetWw())}
	for _, v := range penta {
		if v < 0 || v > 1<<40 {
			return sprt.Results{}, fmt.Errorf("unit %s: pentanomial count out of range", unit)
		}
	}
	if got := penta.Pairs(); got != int64(pairs) {
		return sprt.Results{}, fmt.Errorf("unit %s has %d pairs; the pentanomial counts %d", unit, pairs, got)
	}
	res := sprt.Results{Wins: int64(r.GetWins()), Draws: int64(r.GetDraws()), Losses: int64(r.GetLosses()), Pentanomial: &penta}
	if r.GetWins() > 1<<40 || r.GetDraws() > 1<<40 || r.GetLosses() > 1<<40 {
		return sprt.Results{}, fmt.Errorf("unit %s: W/D/L out of range", unit)
	}
	if err := res.Validate(); err != nil {
		return sprt.Results{}, fmt.Errorf("unit %s: %v", unit, err)
	}
	if len(r.GetPgns()) != 2*pairs {
		return sprt.Results{}, fmt.Errorf("unit %s has %d games; the result has %d PGNs", unit, 2*pairs, len(r.GetPgns()))
	}
	for i, g := range r.GetPgns() {
		if !strings.HasPrefix(strings.TrimSpace(g), "[") || len(g) > 1<<20 {
			return sprt.Results{}, fmt.Errorf("unit %s: PGN %d is not a PGN game (or is over 1 MB)", unit, i)
		}
	}
	for i, inc := range r.GetIncidents() {
		if inc.GetGameIndex() >= uint32(2*pairs) {
			return sprt.Results{}, fmt.Errorf("unit %s: incident %d names game %d of %d", unit, i, inc.GetGameIndex(), 2*pairs)
		}
	}
	return res, nil
}

func incidentClass(k arbiterv1.IncidentKind) string {
	switch k {
	case arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS:
		return incTimeLoss
	case arbiterv1.IncidentKind_INCIDENT_KIND_CRASH:
		return incCrash
	case arbiterv1.IncidentKind_INCIDENT_KIND_ILLEGAL_MOVE:
		return incIllegal
	case arbiterv1.IncidentKind_INCIDENT_KIND_HANG:
		return incHang
	case arbiterv1.IncidentKind_INCIDENT_KIND_DISCONNECT:
		return incDisconnect
	}
	return incOther
}

// submitGames handles a Submit for a batch. handled is false when the
// request is neither a game result nor for a batch (the perft path takes it).
func (c *Coordinator) submitGames(ctx context.Context, req *arbiterv1.SubmitRequest) (*arbiterv1.SubmitResponse, error, bool) {
	w, unit := req.GetWorkerId(), req.GetUnitId()
	gr, isGames := req.GetResult().(*arbiterv1.SubmitRequest_GamePairs)
	c.mu.Lock()
	j, idx, isBatch := c.gameUnit(unit)
	if !isBatch {
		// Not a batch: the perft path refuses it (unknown unit, or a game
		// result for a perft unit).
		c.mu.Unlock()
		return nil, nil, false
	}
	if !c.touch(w) {
		c.mu.Unlock()
		return nil, errUnknownWorker(w), true
	}
	if !isGames || gr.GamePairs == nil {
		c.mu.Unlock()
		return nil, c.refuse("unit %s is a game-pair batch; the result is not a game-pair result", unit), true
	}
	t := j.test
	_, pairs := t.pairsOf(idx)
	if t.totalPairs > 0 && idx >= t.batchCount() {
		c.mu.Unlock()
		return nil, status.Errorf(codes.NotFound, "unknown unit %q", unit), true
	}
	c.mu.Unlock()

	log := c.log.With(zap.String(logging.JobID, j.rec.ID), zap.String(logging.UnitID, unit), zap.String(logging.WorkerID, w),
		zap.String(logging.LeaseID, req.GetLeaseId()))
	res, err := checkBatchResult(unit, pairs, gr.GamePairs)
	if err != nil {
		log.Warn("batch result refused", zap.Error(err))
		return nil, c.refuse("%v", err), true
	}
	incidents := map[string]int64{}
	for _, inc := range gr.GamePairs.GetIncidents() {
		incidents[incidentClass(inc.GetKind())]++
	}
	if n := gr.GamePairs.GetOverruns(); n > 0 {
		incidents[incOverrun] += int64(n)
	}

	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	endLeases := func() {
		for _, l := range c.leases.ForUnit(unit) {
			if l.WorkerID == w {
				c.leases.End(l.ID)
			}
		}
	}
	if j.rec.State != store.StateRunning {
		endLeases()
		c.mu.Unlock()
		c.metrics.results.WithLabelValues("discarded").Inc()
		return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DISCARDED}, nil, true
	}
	if prev := t.done[idx]; prev != nil {
		// Counted already: compare, never add.
		endLeases()
		c.reopenIfLeaseless(j, idx)
		c.mu.Unlock()
		same := prev.Penta == *res.Pentanomial && prev.Wins == res.Wins && prev.Draws == res.Draws && prev.Losses == res.Losses
		c.metrics.results.WithLabelValues("duplicate").Inc()
		log.Info("duplicate batch result; not counted", zap.Bool("same_counts", same), zap.String("counted_from", prev.WorkerID))
		return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_DUPLICATE}, nil, true
	}
	now := c.cfg.Now()
	leasedAt := t.open[idx]
	for _, l := range c.leases.ForUnit(unit) {
		if l.WorkerID == w {
			leasedAt = l.Granted
		}
	}
	b := &store.Batch{UnitID: unit, JobID: j.rec.ID, Idx: idx, WorkerID: w, Pairs: pairs, Penta: *res.Pentanomial,
		Wins: res.Wins, Draws: res.Draws, Losses: res.Losses, Incidents: encodeIncidents(incidents),
		LeasedAt: leasedAt, At: now, ElapsedMS: req.GetElapsed().AsDuration().Milliseconds()}
	// The new totals and SPRT on copies: memory changes after the commit.
	total := t.results
	total.Wins += res.Wins
	total.Draws += res.Draws
	total.Losses += res.Losses
	penta := t.penta
	for i := range penta {
		penta[i] += res.Pentanomial[i]
	}
	total.Pentanomial = &penta
	var seq *sprt.Sequential
	var jobChange *store.JobChange
	if t.seq != nil {
		cp := *t.seq
		if t.seq.Overshoot != nil {
			o := *t.seq.Overshoot
			cp.Overshoot = &o
		}
		seq = &cp
		st, err := seq.Update(total)
		if err != nil {
			c.mu.Unlock()
			return nil, c.refuse("unit %s: SPRT update: %v", unit, err), true
		}
		if st.State != sprt.Continue {
			jobChange = c.finalChange(j, store.StateDone, "")
			jobChange.Total, jobChange.Divide = "", nil
		}
	}
	if jobChange == nil && t.totalPairs > 0 && len(t.done)+1 == t.batchCount() {
		jobChange = c.finalChange(j, store.StateDone, "")
		jobChange.Total, jobChange.Divide = "", nil
	}
	c.mu.Unlock()

	if err := c.store.CommitBatch(ctx, b, gr.GamePairs.GetPgns(), seqJSON(seqOr(seq, t)), jobChange, nil); err != nil {
		log.Error("store commit failed", zap.Error(err))
		return nil, status.Errorf(codes.Unavailable, "store: %v", err), true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	endLeases()
	t.done[idx] = b
	delete(t.open, idx)
	if seq != nil {
		t.seq = seq
	}
	t.pgns += int64(len(gr.GamePairs.GetPgns()))
	c.countBatch(j, b)
	c.metrics.results.WithLabelValues("accepted").Inc()
	c.metrics.observePGNs(gr.GamePairs.GetPgns())
	fields := []zap.Field{zap.Int("pairs", pairs), zap.Int64("games", t.results.Games()), zap.Duration("elapsed", req.GetElapsed().AsDuration())}
	if t.seq != nil {
		fields = append(fields, zap.Float64("llr", t.seq.LLR), zap.String("sprt", string(t.seq.State)))
	}
	log.Info("batch accepted", fields...)
	if jobChange != nil {
		c.applyFinal(j, jobChange)
	} else {
		c.notify(j)
	}
	return &arbiterv1.SubmitResponse{Outcome: arbiterv1.SubmitOutcome_SUBMIT_OUTCOME_ACCEPTED}, nil, true
}

func seqOr(s *sprt.Sequential, t *testState) *sprt.Sequential {
	if s != nil {
		return s
	}
	return t.seq
}

// reopenIfLeaseless keeps a batch's bookkeeping right after a duplicate.
func (c *Coordinator) reopenIfLeaseless(j *jobState, idx int) {
	if !j.test.leased(c, j, idx) {
		delete(j.test.open, idx)
	}
}

// ---- snapshots ----

// testProto fills a job snapshot of a test. Caller holds mu.
func (c *Coordinator) testProto(j *jobState, out *arbiterv1.Job) {
	t := j.test
	out.Kind = j.rec.Kind
	out.Perft = nil
	spec := proto.Clone(t.spec).(*arbiterv1.MatchSpec)
	spec.OpeningsCount = uint32(len(spec.GetOpenings()))
	spec.Openings = nil
	out.Match = spec
	p := t.penta
	mp := &arbiterv1.MatchProgress{
		Pentanomial: &arbiterv1.Pentanomial{Ll: uint64(p[0]), Ld: uint64(p[1]), Dd: uint64(p[2]), Wd: uint64(p[3]), Ww: uint64(p[4])},
		Wins:        uint64(t.results.Wins), Draws: uint64(t.results.Draws), Losses: uint64(t.results.Losses),
		Games: uint64(t.results.Games()), BatchesDone: uint64(len(t.done)), BatchesLeased: uint64(len(t.open)),
		BatchPairs: uint32(t.batchPairs), Pgns: uint64(t.pgns),
	}
	if t.seq != nil {
		st := t.seq.Status()
		mp.Llr, mp.LowerBound, mp.UpperBound, mp.SprtState = st.LLR, st.LowerBound, st.UpperBound, string(st.State)
	}
	if t.results.Games() > 0 {
		r := t.results
		r.Pentanomial = &p
		fe := sprt.FixedGamesElo(r)
		mp.Elo, mp.EloCiLow, mp.EloCiHigh, mp.Los = finite(fe.Elo), finite(fe.CI95[0]), finite(fe.CI95[1]), finite(fe.LOS)
		ne := sprt.NEloFromPentanomial(p)
		mp.Nelo, mp.NeloHalfWidth = finite(ne.NElo), finite(ne.HalfWidth95)
	}
	ids := make([]string, 0, len(t.workers)+len(t.refused))
	for id := range t.workers {
		ids = append(ids, id)
	}
	for id := range t.refused {
		if t.workers[id] == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		wi := &arbiterv1.WorkerIncidents{WorkerId: id}
		if gw := c.sched().workers[id]; gw != nil {
			wi.Name, wi.BenchNps = gw.name, gw.benchNPS
			wi.TimeScale = 1
			if t.limits.HasClock() || t.limits.MoveTime > 0 {
				wi.TimeScale = c.timeScale(j, id)
			}
		}
		if tw := t.workers[id]; tw != nil {
			wi.Games = uint64(tw.games)
			wi.TimeLosses, wi.Crashes, wi.IllegalMoves = uint64(tw.incidents[incTimeLoss]), uint64(tw.incidents[incCrash]), uint64(tw.incidents[incIllegal])
			wi.Disconnects = uint64(tw.incidents[incDisconnect])
			wi.Other = uint64(tw.incidents[incOther] + tw.incidents[incHang])
			wi.Excluded, wi.Reason = tw.excluded, tw.reason
		}
		if why, ok := t.refused[id]; ok {
			wi.Excluded, wi.Reason = true, "cannot run the test: "+why
		}
		mp.Workers = append(mp.Workers, wi)
	}
	out.MatchProgress = mp
	if out.Progress != nil {
		out.Progress.UnitsDone = uint64(len(t.done))
		out.Progress.UnitsTotal = uint64(j.rec.UnitsTotal)
		out.Progress.NodesDone = ""
		seen := map[string]bool{}
		for idx := range t.open {
			for _, l := range c.leases.ForUnit(unitID(j.rec.ID, idx)) {
				seen[l.WorkerID] = true
			}
		}
		out.Progress.ActiveWorkers = uint32(len(seen))
	}
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// SPRTState is one test's statistics, for metrics and dashboards.
type SPRTState struct {
	TestID string
	Kind   string // "sprt" or "match"
	State  string // "continue", "accepted", "rejected"; "" for a match
	// LLR and its bounds (zero for a match).
	LLR, Lower, Upper float64
	// Elo ± its 95% interval, and nElo.
	Elo, EloLow, EloHigh, NElo float64
	Games                      int64
	Wins, Draws, Losses        int64
	Pentanomial                [5]int64
	Workers                    int // workers holding a batch now
}

// SPRTStates returns every running test's statistics.
func (c *Coordinator) SPRTStates() []SPRTState {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []SPRTState
	for _, j := range c.order {
		if j.test == nil || j.rec.State != store.StateRunning {
			continue
		}
		snap := &arbiterv1.Job{Progress: &arbiterv1.JobProgress{}}
		c.testProto(j, snap)
		mp := snap.GetMatchProgress()
		out = append(out, SPRTState{
			TestID: j.rec.ID, Kind: j.rec.Kind, State: mp.GetSprtState(), LLR: mp.GetLlr(), Lower: mp.GetLowerBound(), Upper: mp.GetUpperBound(),
			Elo: mp.GetElo(), EloLow: mp.GetEloCiLow(), EloHigh: mp.GetEloCiHigh(), NElo: mp.GetNelo(), Games: int64(mp.GetGames()),
			Wins: int64(mp.GetWins()), Draws: int64(mp.GetDraws()), Losses: int64(mp.GetLosses()), Pentanomial: j.test.penta,
			Workers: int(snap.GetProgress().GetActiveWorkers()),
		})
	}
	return out
}

// ---- PGN download ----

// DownloadPGN implements JobService: every stored game of a test, by batch.
func (s *JobServer) DownloadPGN(req *arbiterv1.DownloadPGNRequest, stream arbiterv1.JobService_DownloadPGNServer) error {
	c := s.c
	c.mu.Lock()
	j, err := c.job(req.GetJobId())
	if err == nil && j.test == nil {
		err = status.Errorf(codes.InvalidArgument, "job %s is a %s job, not a match or SPRT test", j.rec.ID, j.rec.Kind)
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	var buf strings.Builder
	games := uint32(0)
	flush := func() error {
		if games == 0 {
			return nil
		}
		err := stream.Send(&arbiterv1.DownloadPGNResponse{Pgn: buf.String(), Games: games})
		buf.Reset()
		games = 0
		return err
	}
	err = c.store.PGNs(stream.Context(), j.rec.ID, func(p string) error {
		buf.WriteString(p)
		if !strings.HasSuffix(p, "\n\n") {
			buf.WriteString("\n")
		}
		games++
		if buf.Len() >= 256<<10 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return status.Errorf(codes.Unavailable, "store: %v", err)
	}
	return flush()
}
