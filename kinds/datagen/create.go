package datagen

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	dg "github.com/arbiter-chess/arbiter/datagen"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Limits on what a dataset may ask for.
const (
	// MaxPositions bounds a job (10^11: a hundred times the largest public
	// NNUE datasets of one run).
	MaxPositions = 100_000_000_000
	// MaxBatchGames bounds a batch, so that its shard fits one message.
	MaxBatchGames = 256
	// DefaultBatchGames is arbiter datagen's --batch-games, so that batch
	// b of a dataset holds the same games on the farm as on one machine:
	// about 10 s at 5000 nodes per move on one core of this decade.
	DefaultBatchGames = 8
	// MaxShardBytes bounds a shard as a worker sends it.
	MaxShardBytes = 8 << 20
	// MaxNameBytes bounds a job's label.
	MaxNameBytes = 200
)

// settingsOf is a spec's settings and record filters.
func settingsOf(spec *arbiterv1.DatagenSpec) (dg.Settings, dg.Filters) {
	s := Settings(spec)
	return s, s.Filters
}

// checkSpec validates a spec (every refusal names the field) and returns
// its settings and batch size.
func checkSpec(spec *arbiterv1.DatagenSpec) (dg.Settings, dg.Filters, int, error) {
	if spec == nil {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("spec missing")
	}
	if err := gamepair.CheckEngine("engine", spec.GetEngine()); err != nil {
		return dg.Settings{}, dg.Filters{}, 0, err
	}
	if tc := spec.GetEngine().GetTimeControl(); tc != nil {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("engine: a dataset searches a fixed node count (nodes); an engine time control does not apply")
	}
	if n := spec.GetPositions(); n == 0 || n > MaxPositions {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("positions: %d: must be between 1 and %d", n, uint64(MaxPositions))
	}
	if n := len(spec.GetName()); n > MaxNameBytes {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("name: %d bytes, at most %d", n, MaxNameBytes)
	}
	if err := textcheck.Check("name", spec.GetName()); err != nil {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("%v", err)
	}
	if spec.GetRandomPliesMin() > spec.GetRandomPliesMax() {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("random-plies: %d-%d: the minimum is above the maximum",
			spec.GetRandomPliesMin(), spec.GetRandomPliesMax())
	}
	if len(spec.GetOpenings()) > dg.MaxOpenings {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("openings: %d: at most %d", len(spec.GetOpenings()), dg.MaxOpenings)
	}
	s, f := settingsOf(spec)
	if err := s.Validate(); err != nil {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("%v", err)
	}
	games := int(spec.GetBatchGames())
	if games == 0 {
		games = DefaultBatchGames
	}
	if games > MaxBatchGames {
		return dg.Settings{}, dg.Filters{}, 0, apierr.Invalid("batch-games: %d: at most %d", games, MaxBatchGames)
	}
	return s, f, games, nil
}

// Create implements core.Workload.
func (w *Workload) Create(ctx context.Context, specAny any, submitter string) (core.JobRef, error) {
	in, ok := specAny.(*arbiterv1.DatagenSpec)
	if !ok || !in.ProtoReflect().IsValid() {
		return core.JobRef{}, apierr.Invalid("datagen spec missing")
	}
	if n := len(in.GetOpenings()); n > dg.MaxOpenings {
		return core.JobRef{}, apierr.Invalid("openings: %d: at most %d", n, dg.MaxOpenings)
	}
	spec := proto.Clone(in).(*arbiterv1.DatagenSpec)
	if err := gamepair.ResolveArtifacts(w.deps.ResolveArtifact, []string{"engine"}, spec.GetEngine()); err != nil {
		w.log.Info("dataset refused", zap.Error(err))
		return core.JobRef{}, err
	}
	s, f, games, err := checkSpec(spec)
	if err != nil {
		w.log.Info("dataset refused", zap.Error(err))
		return core.JobRef{}, err
	}
	if err := dg.CheckOpenings(s, dg.BatchSeed(spec.GetSeed(), 0), games); err != nil {
		w.log.Info("dataset refused", zap.Error(err))
		return core.JobRef{}, apierr.Invalid("%v", err)
	}
	spec.BatchGames = uint32(games)
	specBytes, err := proto.Marshal(spec)
	if err != nil {
		return core.JobRef{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "encode spec: %v", err)
	}
	id := "d" + randomHex(6)
	j := w.newJob(spec, s, f, games)
	j.rec = &store.Job{ID: id, Kind: Kind, State: store.StateRunning, CreatedAt: w.deps.Now(), RootMoves: []string{},
		Submitter: submitter, Priority: spec.GetPriority(), Throughput: float64(spec.GetThroughput())}
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	if err := createJob(ctx, w.store, j.rec, specBytes, games); err != nil {
		return core.JobRef{}, apierr.Store(err)
	}
	w.mu.Lock()
	w.jobs[id] = j
	w.running = append(w.running, j)
	w.mu.Unlock()
	if w.host != nil {
		w.host.WorkAvailable()
	}
	w.log.Info("dataset submitted", zap.String(logging.JobID, id), zap.String("engine", spec.GetEngine().GetName()),
		zap.Uint64("positions", spec.GetPositions()), zap.Uint64("nodes", spec.GetNodes()), zap.Int("batch_games", games),
		zap.String("submitter", submitter))
	return core.JobRef{ID: id, Seq: j.rec.Seq, Submitter: submitter}, nil
}

// newJob is a job's memory at its start (rec is the caller's).
func (w *Workload) newJob(spec *arbiterv1.DatagenSpec, s dg.Settings, f dg.Filters, games int) *job {
	j := &job{spec: spec, settings: s, filters: f, batchGames: games, workers: make(map[string]*share),
		stored: make(map[uint64]bool), open: make(map[uint64]string), excluded: make(map[string]string),
		seen: make(map[[16]byte]struct{})}
	j.prog.init()
	return j
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
