package epd

// The coordinator side of EPD suites on the farm: the workload that keeps
// a job's spec, leases its batches (some positions for one engine) to
// workers that offer CapabilityEPD, and merges their results with Merger.
//
// Invariants:
//   - A batch counts once: epd_results has (job, batch) as primary key; a
//     result for a stored batch is answered DUPLICATE and never merged.
//   - A result is checked by the job's Merger (the batch of the lease, its
//     engine, its positions in order, every move legal, every number in
//     range; solved recomputed) and the checked copy is on disk (its row,
//     and the job's end when it is the last batch, in one transaction)
//     before it is merged in memory and the worker is acknowledged.
//   - Load merges the stored rows again through a new Merger: a job whose
//     rows do not merge is quarantined, never half-counted.
//   - Nothing a worker sends is a loop bound: the batch index comes from
//     the lease's unit id and is looked up; a result is capped in bytes
//     before it is decoded and must have exactly its batch's positions.
//
// Locking follows core.Workload: mu guards memory and is never held across
// a store write; commitMu serialises the decisions that end in a write.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

// Kind is the job kind (Job.kind, the stored kind, the CLI word).
const Kind = "epd"

// FamilyEPD is how clients group EPD jobs (jobkind.Family).
const FamilyEPD jobkind.Family = "epd"

// CapabilityEPD is what a worker offers when it runs EPD batches.
const CapabilityEPD = "epd-1"

func init() {
	workload.Register(workload.Kind{
		Name: Kind,
		Spec: func() proto.Message { return &arbiterv1.EpdSpec{} },
		New:  func(d workload.Deps) (core.Workload, error) { return NewWorkload(d) },
		// Engines may be uploaded by the submitter.
		Runs:    workload.SubmittedPrograms,
		Order:   60,
		Example: example,
	})
	store.RegisterSchema(schema)
	jobkind.Register(jobkind.Kind{Name: Kind, Family: FamilyEPD, Path: pagePath, Noun: "EPD job"})
}

// example is a job of two Bratko-Kopec positions at 500 nodes; it writes
// the suite into dir.
func example(engine, dir string) []string {
	suite := filepath.Join(dir, "example.epd")
	os.WriteFile(suite, []byte("1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - bm Qd1+; id \"BK.01\";\n"+
		"3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - bm d5; id \"BK.02\";\n"), 0o644)
	return []string{"epd", "--json", "--engine", engine, "--suite", suite, "--each", "nodes=500"}
}

// Workload is the EPD workload.
type Workload struct {
	deps  workload.Deps
	log   *zap.Logger
	store *store.Store
	host  core.Host

	workload.Problems // the jobs the last Load skipped

	commitMu sync.Mutex
	mu       sync.Mutex
	jobs     map[string]*farmJob
	running  []*farmJob
}

// farmJob is one EPD job in memory; the fields under "running" are nil
// once it has finished.
type farmJob struct {
	rec    *store.Job
	spec   *arbiterv1.EpdSpec
	suite  *Suite
	limit  Limit
	merger *Merger

	// running
	workload.Batches[uint32]
	next uint32 // no batch below it is fresh (never leased since the load)
}

// NewWorkload returns the workload; the core calls Load.
func NewWorkload(d workload.Deps) (*Workload, error) {
	if d.Store == nil {
		return nil, apierr.New(apierr.Internal, apierr.ReasonInternal, "epd: a store is required")
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Workload{deps: d, log: d.Logger, store: d.Store, jobs: map[string]*farmJob{}}, nil
}

// SetHost gives the workload the core to signal.
func (w *Workload) SetHost(h core.Host) { w.host = h }

// Kind implements core.Workload.
func (w *Workload) Kind() string { return Kind }

func (j *farmJob) isRunning() bool { return j.rec.State == store.StateRunning }

// unitID names batch idx of job jobID.
func unitID(jobID string, idx uint32) string {
	return jobID + ".e" + strconv.FormatUint(uint64(idx), 10)
}

// parseUnit splits a unit id; it costs O(len(u)).
func parseUnit(u string) (jobID string, idx uint32, ok bool) {
	i := strings.LastIndex(u, ".e")
	if i <= 0 || len(u)-i > 12 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(u[i+2:], 10, 32)
	if err != nil {
		return "", 0, false
	}
	return u[:i], uint32(n), true
}

// newFarmJob is a job's memory from its validated spec (rec is the
// caller's).
func newFarmJob(spec *arbiterv1.EpdSpec, suite *Suite, limit Limit) *farmJob {
	return &farmJob{spec: spec, suite: suite, limit: limit, merger: NewMerger(spec, suite), Batches: workload.NewBatches[uint32]()}
}

// checkFarmSpec is what the coordinator refuses of a spec beyond
// ValidateSpec: engines it cannot send to workers, and engine limits
// (every engine searches under the job's one limit).
func checkFarmSpec(spec *arbiterv1.EpdSpec) (*Suite, Limit, error) {
	for i, e := range spec.GetEngines() {
		which := "engines[" + strconv.Itoa(i) + "]"
		if err := gamepair.CheckEngine(which, e); err != nil {
			return nil, Limit{}, err
		}
		if e.GetTimeControl() != nil || e.GetNet() != nil {
			return nil, Limit{}, apierr.Invalid("%s: a time control or a net does not apply: every engine searches under the job's limit with its own net", which)
		}
		if e.GetMovegenGate() != "" {
			return nil, Limit{}, apierr.Invalid("%s: movegen_gate is for matches and tests; check an engine's generator with arbiter verify", which)
		}
	}
	suite, limit, err := ValidateSpec(spec)
	if err != nil {
		return nil, Limit{}, apierr.Invalid("%v", err)
	}
	return suite, limit, nil
}

// Create implements core.Workload.
func (w *Workload) Create(ctx context.Context, specAny any, submitter string) (core.JobRef, error) {
	in, ok := specAny.(*arbiterv1.EpdSpec)
	if !ok || !in.ProtoReflect().IsValid() {
		return core.JobRef{}, apierr.Invalid("epd spec missing")
	}
	spec := proto.Clone(in).(*arbiterv1.EpdSpec)
	if len(spec.Engines) > MaxEngines {
		return core.JobRef{}, apierr.Invalid("epd spec: %d engines, want 1 to %d", len(spec.Engines), MaxEngines)
	}
	which := make([]string, len(spec.Engines))
	for i := range which {
		which[i] = "engines[" + strconv.Itoa(i) + "]"
	}
	if err := gamepair.ResolveArtifacts(w.deps.ResolveArtifact, which, spec.Engines...); err != nil {
		w.log.Info("epd job refused", zap.Error(err))
		return core.JobRef{}, err
	}
	suite, limit, err := checkFarmSpec(spec)
	if err != nil {
		w.log.Info("epd job refused", zap.Error(err))
		return core.JobRef{}, err
	}
	if spec.BatchPositions == 0 {
		spec.BatchPositions = DefaultBatchPositions
	}
	specBytes, err := proto.Marshal(spec)
	if err != nil {
		return core.JobRef{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "encode spec: %v", err)
	}
	j := newFarmJob(spec, suite, limit)
	j.rec = &store.Job{ID: "e" + randomHex(6), Kind: Kind, State: store.StateRunning, CreatedAt: w.deps.Now(), RootMoves: []string{},
		Submitter: submitter, Priority: spec.GetPriority(), Throughput: float64(spec.GetThroughput())}
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	if err := createJobRow(ctx, w.store, j.rec, specBytes); err != nil {
		return core.JobRef{}, apierr.Store(err)
	}
	w.mu.Lock()
	w.jobs[j.rec.ID] = j
	w.running = append(w.running, j)
	w.mu.Unlock()
	if w.host != nil {
		w.host.WorkAvailable()
	}
	w.log.Info("epd job submitted", zap.String(logging.JobID, j.rec.ID), zap.String("suite", spec.GetName()),
		zap.Int("positions", len(spec.Positions)), zap.Int("engines", len(spec.Engines)), zap.String("limit", limit.String()),
		zap.String("submitter", submitter))
	return core.JobRef{ID: j.rec.ID, Seq: j.rec.Seq, Submitter: submitter}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Load implements core.Workload: every EPD job, a running one resumed
// with its stored batches merged and every other batch open again.
func (w *Workload) Load(ctx context.Context) ([]core.JobRef, error) {
	refs, err := w.LoadJobs(ctx, w.store, w.log, Kind, "epd job", w.loadJob)
	if err != nil {
		return nil, apierr.Store(err)
	}
	return refs, nil
}

// loadJob rebuilds one job from its rows and keeps it.
func (w *Workload) loadJob(ctx context.Context, rec *store.Job) error {
	j, err := w.rebuild(ctx, rec)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.jobs[rec.ID] = j
	if j.isRunning() {
		w.running = append(w.running, j)
	}
	return nil
}

// rebuild is a stored job in memory: its spec checked again and its
// stored batches merged again.
func (w *Workload) rebuild(ctx context.Context, rec *store.Job) (*farmJob, error) {
	specBytes, err := loadJobRow(ctx, w.store, rec.ID)
	if err != nil {
		return nil, err
	}
	spec := &arbiterv1.EpdSpec{}
	if err := proto.Unmarshal(specBytes, spec); err != nil {
		return nil, apierr.Invalid("spec: %v", err)
	}
	suite, limit, err := checkFarmSpec(spec)
	if err != nil {
		return nil, apierr.Invalid("spec no longer valid: %v", err)
	}
	j := newFarmJob(spec, suite, limit)
	j.rec = rec
	rows, err := loadResultRows(ctx, w.store, rec.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if added, err := j.merger.Add(r); err != nil || !added {
			return nil, apierr.Invalid("stored batch %d does not merge (%v)", r.GetBatch(), err)
		}
	}
	if !j.isRunning() {
		j.Batches = workload.Batches[uint32]{}
		return j, nil
	}
	if j.merger.Done() {
		change := &store.JobChange{State: store.StateDone, FinishedAt: w.deps.Now()}
		if err := w.store.SetJobState(ctx, rec.ID, change); err != nil {
			return nil, apierr.Store(err)
		}
		w.finish(j, change)
		return j, nil
	}
	merged, total := j.merger.Progress()
	w.log.Info("epd job resumed", zap.String(logging.JobID, rec.ID), zap.Int("batches_done", merged), zap.Int("batches", total))
	return j, nil
}

// finish ends j in memory after the store has its final state. Caller
// holds mu (or is loading).
func (w *Workload) finish(j *farmJob, ch *store.JobChange) {
	j.rec.State, j.rec.Error, j.rec.FinishedAt = ch.State, ch.Error, ch.FinishedAt
	if i := slices.Index(w.running, j); i >= 0 {
		w.running = slices.Delete(w.running, i, i+1)
	}
	j.Batches = workload.Batches[uint32]{}
	merged, total := j.merger.Progress()
	w.log.Info("epd job finished", zap.String(logging.JobID, j.rec.ID), zap.String("state", ch.State), zap.String("error", ch.Error),
		zap.Int("batches_done", merged), zap.Int("batches", total))
}

// Cancel implements core.Workload. Stored results stay.
func (w *Workload) Cancel(ctx context.Context, jobID, reason string) error {
	return w.end(ctx, jobID, &store.JobChange{State: store.StateCancelled, Error: reason, FinishedAt: w.deps.Now()})
}

// Fail implements core.Failer: the coordinator ends a job that no worker
// could start (grpcapi.StallWatch). Stored results stay.
func (w *Workload) Fail(ctx context.Context, jobID, reason string) error {
	return w.end(ctx, jobID, &store.JobChange{State: store.StateFailed, Error: reason, FinishedAt: w.deps.Now()})
}

func (w *Workload) end(ctx context.Context, jobID string, change *store.JobChange) error {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	return gamepair.Cancel(ctx, w.store, &w.mu, w.jobs, func(j *farmJob) *store.Job { return j.rec }, jobID, change, w.finish)
}

var (
	_ core.Workload        = (*Workload)(nil)
	_ core.Failer          = (*Workload)(nil)
	_ workload.Needer      = (*Workload)(nil)
	_ workload.Quarantiner = (*Workload)(nil)
)
