package gamepair

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// The skeleton of a game workload (kinds/test's tests, kinds/spsa's tunes): a
// Set holds a workload's jobs and does for it what does not depend on its
// kind of job: leasing batches in order (setsched.go), the commit step of
// a batch result (commit.go), Load (setload.go), Create (setcreate.go), Cancel, and
// what snapshots and the web read. The workload keeps its own type of job,
// which embeds Job, and tells the Set what is its own through Hooks.
//
// Locking follows core.Workload: Mu guards memory and is never held
// across a store write; CommitMu serialises decisions that end in a store
// write, so that leases and heartbeats go on while a batch is committed.

// Job is what a game workload keeps of each of its jobs, whatever their
// kind. Fields marked "running" are nil once the job has finished.
type Job struct {
	Rec     *store.Job
	Results sprt.Results // engine A's games over the counted batches
	Penta   sprt.Pentanomial
	PGNs    int64 // stored games; 0 once the retention setting deleted them
	Done    int   // counted batches
	Workers *Workers

	// running
	Openings []*arbiterv1.Opening // in the order of play
	// Batches are the batches stored and leased: stored ones are counted,
	// or skipped at load while their row still holds the unit id (a new
	// result would fail on the primary key until the row is removed).
	Batches *Batches
	// Cross holds the batches waiting for a replay by another identity,
	// and the identities excluded for a replay that differed (nil until
	// the job has one; crosscheck.go).
	Cross *CrossCheck
}

// Running reports whether the job runs.
func (j *Job) Running() bool { return j.Rec.State == store.StateRunning }

// Event is an event of a worker in the job.
func (j *Job) Event(unitID, workerID, kind, detail string, at time.Time) store.Event {
	return store.Event{JobID: j.Rec.ID, UnitID: unitID, WorkerID: workerID, Kind: kind, Detail: detail, At: at}
}

// Proto is the job's part of its snapshot: id, kind, state, times and
// submitter.
func (j *Job) Proto() *arbiterv1.Job {
	r := j.Rec
	out := &arbiterv1.Job{JobId: r.ID, Kind: r.Kind, State: jobproto.State(r.State), Error: r.Error,
		CreatedAt: timestamppb.New(r.CreatedAt), Submitter: r.Submitter}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = timestamppb.New(r.FinishedAt)
	}
	return out
}

// count adds a counted batch to the job's totals.
func (j *Job) count(c *Counted) {
	AddCounts(&j.Results, &j.Penta, c.Penta, c.Wins, c.Draws, c.Losses)
	j.Done++
	j.PGNs += int64(2 * c.Pairs)
}

// AddCounts adds a batch's counts (engine A's) to a job's totals.
func AddCounts(total *sprt.Results, penta *sprt.Pentanomial, batch [5]int64, wins, draws, losses int64) {
	for i := range penta {
		penta[i] += batch[i]
	}
	total.Wins += wins
	total.Draws += draws
	total.Losses += losses
	p := *penta
	total.Pentanomial = &p
}

// Entry is a workload's own type of job: a pointer to a struct that
// embeds Job.
type Entry interface {
	comparable
	Base() *Job
}

// Hooks are what a Set asks of its workload about its kind of job. Those
// that read or change a job in memory are called with Mu held; Submit,
// Load and Over are called while the job is not yet served.
type Hooks[J Entry] struct {
	// Engines are the two engines of j's batches: a worker must be able to
	// run both, and an artifact they use is in use.
	Engines func(j J) (a, b *arbiterv1.EngineSpec)
	// Adjudication is j's adjudication: a worker must have the tables its
	// tablebase rule needs (FitsTablebase).
	Adjudication func(j J) *arbiterv1.Adjudication
	// Schedule is j's priority and throughput share.
	Schedule func(j J) (priority int32, share float64)
	// Unit renders batch idx of j for a worker of speed benchNPS.
	Unit func(j J, idx int, benchNPS uint64) (*arbiterv1.WorkUnit, error)
	// Pairs is the number of pairs of batch idx (in range) of j.
	Pairs func(j J, idx int) int
	// Next is the next-state hook of the commit step (Set.Result).
	Next func(j J, a *Accepted) (*Step, error)
	// Summary adds to the log line of a finished job.
	Summary func(j J) []zap.Field
	// Load rebuilds one stored job from its rows for Set.Load, with its
	// counted batches checked (the Set counts them).
	Load func(ctx context.Context, rec *store.Job) (J, *Stored, error)
	// Over reports whether running job j, loaded, is over (decided or
	// complete) though not closed when the coordinator stopped.
	Over func(j J) bool
	// Submit checks a submitted spec (Create's argument) and makes the
	// job; its record is the Set's to make. It is called without Mu.
	Submit func(specAny any) (*Submission[J], error)
	// Snapshot adds j's own to its snapshot (out has the Job's part).
	Snapshot func(j J, out *arbiterv1.Job)
	// Describe, when set, adds what lists find j by (engines, verdict,
	// tags, ...) to info. It is called under Mu and must be cheap: lists
	// call it for every job.
	Describe func(j J, info *core.JobInfo)
	// Counted, when set, reads j's counted batches from the store in the
	// order they were counted (purge.go). Nil: j's batches are never
	// purged (a workload whose jobs no replay checks).
	Counted func(ctx context.Context, j J) ([]Counted, error)
	// Recount is j's next state were its counted batches exactly kept (in
	// the order they were counted): the stored form of its SPRT state,
	// its final state when that decides it (nil: it runs on), and apply,
	// which makes the state j's once stored. Called under Mu.
	Recount func(j J, kept []Counted, now time.Time) (sprtState string, change *store.JobChange, apply func(), err error)
}

// WorkerInfo is what snapshots show of a worker: the core's registry is
// behind the core's lock, which a workload may not take under its own.
type WorkerInfo struct {
	Name     string
	BenchNPS uint64
}

// Deps are what the coordinator gives every game workload.
type Deps struct {
	Store  *store.Store
	Host   core.Host // nil until the core is built (SetHost)
	Logger *zap.Logger
	Now    func() time.Time
	// Trust is every identity's trust, shared by the game workloads
	// (trust.go). Nil trusts every identity: only for unit tests that
	// need no trust; the coordinator always gives one.
	Trust *Trust
}

// Defaults fills in a logger that drops everything and the wall clock.
func (d *Deps) Defaults() {
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
}

// Set is a game workload's jobs and what it shares with the other game
// workloads. Fill in the exported configuration, then call Init.
type Set[J Entry] struct {
	Deps
	What     string       // the noun of a job in logs and messages: "test", "tune"
	Kinds    []string     // the stored kinds of its jobs
	Activity *Activity    // each worker's recent games over every game workload
	Games    *GameCounter // arbiter_games_total; nil counts none
	// GameTable is the store's table of its jobs, whose games retention
	// deletes (Expire).
	GameTable store.GameTable
	// Replay checks a result's games against the batch the worker was
	// sent (Settings.Replay); nil replays nothing.
	Replay func(unit string, sent *arbiterv1.GamePairBatch, r *arbiterv1.GamePairBatchResult) error
	// CrossCheckable reports whether j's games are a function of its
	// batches (both engines deterministic at a fixed node count), so that
	// a share ReplayFraction of its batches is replayed by another
	// identity before it counts (crosscheck.go). Nil: no job is.
	CrossCheckable func(j J) bool
	ReplayFraction float64
	// CrossChecks counts the checks (nil: none counted).
	CrossChecks *CrossCheckCounter
	Hooks       Hooks[J]

	CommitMu sync.Mutex
	Mu       sync.Mutex
	Jobs     map[string]J // every job, finished ones included
	Running  []J          // by submission
	queue    EventQueue

	workers  map[string]WorkerInfo
	problems []LoadProblem
	// settled are, by job, its last full snapshot taken while none of its
	// batches was held (PublicSnapshot).
	settled map[string]*arbiterv1.Job
}

// Init readies s once its configuration is set.
func (s *Set[J]) Init() {
	s.Jobs = make(map[string]J)
	s.workers = make(map[string]WorkerInfo)
	s.settled = make(map[string]*arbiterv1.Job)
	s.queue.Init(s.Store, s.Logger)
}

// SetHost gives the workload the core to signal (when the core is built
// after the workload).
func (s *Set[J]) SetHost(h core.Host) { s.Host = h }

// seen records what snapshots show of a worker. Caller holds Mu.
func (s *Set[J]) seen(wk *core.Worker) {
	info := WorkerInfo{Name: wk.Name, BenchNPS: wk.Caps.BenchNPS}
	if s.workers[wk.ID] != info {
		s.workers[wk.ID] = info
	}
}

// WorkerRows renders the workers of j for its snapshot, with their names
// and speeds, and the time scale of each when the clock is scaled to
// workers (refNPS). Caller holds Mu.
func (s *Set[J]) WorkerRows(j *Job, scaled bool, refNPS uint64) []*arbiterv1.WorkerIncidents {
	return j.Workers.Rows(s.What, func(wi *arbiterv1.WorkerIncidents) {
		info, ok := s.workers[wi.WorkerId]
		if ok {
			wi.Name = info.Name
			if wi.BenchNps == 0 { // no speed recorded with the job's batches
				wi.BenchNps = info.BenchNPS
			}
		}
		if ok || wi.BenchNps != 0 {
			wi.TimeScale = 1
			if scaled {
				wi.TimeScale = TimeScale(refNPS, wi.BenchNps)
			}
		}
	})
}

// logExcluded logs that a worker gets no more batches of j.
func (s *Set[J]) logExcluded(j *Job, workerID, reason string) {
	s.Logger.Warn("worker excluded from "+s.What, zap.String(logging.JobID, j.Rec.ID), zap.String(logging.WorkerID, workerID),
		zap.String("reason", reason))
}

// finish ends j in memory after the store has its final state: the job
// leaves the running list and keeps only what its snapshot needs. Caller
// holds Mu (or is loading).
func (s *Set[J]) finish(j J, ch *store.JobChange) {
	b := j.Base()
	b.Rec.State, b.Rec.Error, b.Rec.FinishedAt = ch.State, ch.Error, ch.FinishedAt
	if i := slices.Index(s.Running, j); i >= 0 {
		s.Running = slices.Delete(s.Running, i, i+1)
	}
	b.Openings, b.Batches, b.Cross = nil, nil, nil
	delete(s.settled, b.Rec.ID) // nothing is held any more
	b.Workers.DropWindows()
	fields := []zap.Field{zap.String(logging.JobID, b.Rec.ID), zap.String("state", ch.State), zap.String("error", ch.Error)}
	if s.Hooks.Summary != nil {
		fields = append(fields, s.Hooks.Summary(j)...)
	}
	s.Logger.Info(s.What+" finished", fields...)
}

// Cancel is core.Workload's Cancel: counted batches and their games stay.
func (s *Set[J]) Cancel(ctx context.Context, jobID, reason string) error {
	return s.end(ctx, jobID, store.StateCancelled, reason)
}

// Fail implements core.Failer: a running job ends failed with reason (no
// worker could start it). Counted batches and their games stay, as on
// Cancel.
func (s *Set[J]) Fail(ctx context.Context, jobID, reason string) error {
	return s.end(ctx, jobID, store.StateFailed, reason)
}

func (s *Set[J]) end(ctx context.Context, jobID, state, reason string) error {
	s.CommitMu.Lock()
	defer s.CommitMu.Unlock()
	change := &store.JobChange{State: state, Error: reason, FinishedAt: s.Now()}
	return Cancel(ctx, s.Store, &s.Mu, s.Jobs, func(j J) *store.Job { return j.Base().Rec }, jobID, change, s.finish)
}

// Flush writes every queued event; when it returns, every event queued
// before the call is stored (or its error is returned).
func (s *Set[J]) Flush(ctx context.Context) error { return s.queue.Flush(ctx) }

// Has reports whether jobID is a job of s (running or finished).
func (s *Set[J]) Has(jobID string) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	_, ok := s.Jobs[jobID]
	return ok
}

// Describe is core.Describer's Describe: lists filter jobs by state and
// submitter without building snapshots.
func (s *Set[J]) Describe(jobID string) (core.JobInfo, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	j, ok := s.Jobs[jobID]
	if !ok {
		return core.JobInfo{}, false
	}
	b := j.Base()
	info := core.JobInfo{ID: jobID, Kind: b.Rec.Kind, State: b.Rec.State, Submitter: b.Rec.Submitter,
		Started: b.Done > 0 || b.Batches.Leased() > 0, Seq: b.Rec.Seq, Created: b.Rec.CreatedAt}
	if s.Hooks.Describe != nil {
		s.Hooks.Describe(j, &info)
	}
	return info, true
}

// Snapshot is core.Workload's Snapshot: a *arbiterv1.Job with the Job's
// part, and the rest from Hooks.Snapshot.
func (s *Set[J]) Snapshot(jobID string, full bool) (any, bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	j, ok := s.Jobs[jobID]
	if !ok {
		return nil, false
	}
	out := j.Base().Proto()
	s.Hooks.Snapshot(j, out)
	if full && j.Base().Cross.heldCount() == 0 {
		s.settled[jobID] = proto.Clone(out).(*arbiterv1.Job)
	}
	return out, true
}

// PublicSnapshot is what anonymous pages show of job jobID: its full
// snapshot while none of its batches is held for a replay, and otherwise
// the last one taken while none was (crosscheck.go). Counts then move only
// when every held batch has settled, so a page read right after a result
// does not single out a held batch among those counted. A job with held
// batches and no settled snapshot yet (one whose first batches are held)
// shows its snapshot with no batch counted.
func (s *Set[J]) PublicSnapshot(jobID string) (*arbiterv1.Job, bool) {
	snap, ok := s.Snapshot(jobID, true)
	if !ok {
		return nil, false
	}
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if j := s.Jobs[jobID]; j.Base().Cross.heldCount() == 0 {
		return snap.(*arbiterv1.Job), true
	}
	if c := s.settled[jobID]; c != nil {
		return c, true
	}
	c := proto.Clone(snap.(*arbiterv1.Job)).(*arbiterv1.Job)
	if c.GetMatchProgress() != nil {
		c.MatchProgress = &arbiterv1.MatchProgress{}
	}
	return c, true
}

// Stats is core.Workload's Stats: jobs by kind (each of Kinds, even with
// none) and state. Batches are not counted in arbiter_units (an SPRT has
// no fixed number of them).
func (s *Set[J]) Stats() core.Stats {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	st := core.Stats{Jobs: map[core.JobKey]int{}, Units: map[string]int{}}
	for _, k := range s.Kinds {
		for _, state := range core.JobStates {
			st.Jobs[core.JobKey{Kind: k, State: state}] = 0
		}
	}
	for _, j := range s.Jobs {
		r := j.Base().Rec
		st.Jobs[core.JobKey{Kind: r.Kind, State: r.State}]++
	}
	return st
}

// PGNsExpired records that the retention setting deleted the games of
// these finished jobs (ids of other jobs are ignored): their snapshots
// show no stored PGNs.
func (s *Set[J]) PGNsExpired(jobIDs []string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	for _, id := range jobIDs {
		if j, ok := s.Jobs[id]; ok && !j.Base().Running() {
			j.Base().PGNs = 0
		}
	}
}

// UsingArtifact lists the running jobs whose engines use the artifact
// sha, which the artifact store must keep while they run.
func (s *Set[J]) UsingArtifact(sha string) []string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	var out []string
	for _, j := range s.Running {
		if a, b := s.Hooks.Engines(j); j.Base().Running() && Using(sha, a, b) {
			out = append(out, j.Base().Rec.ID)
		}
	}
	return out
}

// Barred returns, by worker id, the running jobs the worker gets no more
// batches of (excluded for its incidents, or unable to run them), sorted.
func (s *Set[J]) Barred() map[string][]string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	out := map[string][]string{}
	for _, j := range s.Running {
		for _, id := range j.Base().Workers.Barred() {
			out[id] = append(out[id], j.Base().Rec.ID)
		}
	}
	for _, ids := range out {
		sort.Strings(ids)
	}
	return out
}

// FarOff returns, by worker id, the running jobs it was excluded from for
// its results (residual.go), sorted: the workers page flags them.
func (s *Set[J]) FarOff() map[string][]string {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	out := map[string][]string{}
	for _, j := range s.Running {
		for _, id := range j.Base().Workers.FarOff() {
			out[id] = append(out[id], j.Base().Rec.ID)
		}
	}
	for _, ids := range out {
		sort.Strings(ids)
	}
	return out
}

// randomID is a new job id: prefix and n random bytes in hex.
func randomID(prefix string, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + hex.EncodeToString(b)
}

// WithoutOpenings is spec as snapshots show it: its openings dropped,
// their number in openings_count. spec is not changed, and its book is not
// copied.
func WithoutOpenings[S BookSpec](spec S) S {
	m := spec.ProtoReflect()
	fields := m.Descriptor().Fields()
	ops, count := fields.ByName("openings"), fields.ByName("openings_count")
	book := m.Get(ops).List()
	kept := m.NewField(ops).List()
	for i := range book.Len() {
		kept.Append(book.Get(i))
	}
	m.Clear(ops)
	out := proto.Clone(spec).(S)
	if kept.Len() > 0 {
		m.Set(ops, protoreflect.ValueOfList(kept))
	}
	out.ProtoReflect().Set(count, protoreflect.ValueOfUint32(uint32(kept.Len())))
	return out
}

// Finite is x, or 0 for a NaN or an infinity (which a snapshot cannot
// carry as a number).
func Finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
