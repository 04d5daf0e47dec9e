package datagen

import (
	"bytes"
	"context"
	"math/bits"

	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	dg "github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// judged is a shard that replayed: its games, their kept records with
// their position keys, and its counts.
type judged struct {
	data    []byte
	games   []dg.Game
	keys    [][16]byte // one per record, in record order
	records int
	gameOf  []int // the game of each record
	pieces  []int // piece count per record
	scores  []int // white-relative score per record
}

// Result implements core.Workload.
func (w *Workload) Result(ctx context.Context, rc core.ResultCall) (core.Outcome, error) {
	jobID, idx, ok := parseUnit(rc.Lease.UnitID)
	if !ok {
		return core.Outcome{}, apierr.New(apierr.InvalidArgument, apierr.ReasonUnknownUnit, "unit %s is not a dataset batch", apierr.Q(rc.Lease.UnitID))
	}
	res, err := resultOf(rc.Result)
	if err != nil {
		return core.Outcome{}, err
	}
	w.mu.Lock()
	j := w.jobs[jobID]
	var settings dg.Settings
	var filters dg.Filters
	var seed uint64
	var games int
	running, stored := false, false
	if j != nil {
		settings, filters, games = j.settings, j.filters, j.batchGames
		seed = dg.BatchSeed(j.spec.GetSeed(), idx)
		running = j.running()
		stored = j.stored[idx]
		if stored {
			j.release(idx, rc.Worker.ID)
		}
	}
	w.mu.Unlock()
	switch {
	case j == nil:
		return core.Outcome{}, apierr.New(apierr.NotFound, apierr.ReasonUnknownUnit, "unit %s: no such dataset", apierr.Q(rc.Lease.UnitID))
	case !running:
		return core.Outcome{Verdict: core.Discarded, EndUnitLeases: true}, nil
	case stored:
		return core.Outcome{Verdict: core.Duplicate, EndUnitLeases: true}, nil
	}
	// The replay is the expensive part and needs no lock.
	jd, err := judge(res.GetShard(), settings, filters, seed, games)
	if err != nil {
		w.mu.Lock()
		if s := j.workers[rc.Worker.ID]; s != nil {
			s.refused++
		} else {
			j.workers[rc.Worker.ID] = &share{refused: 1}
		}
		w.mu.Unlock()
		w.log.Warn("dataset batch refused", zap.String(logging.JobID, jobID), zap.String(logging.WorkerID, rc.Worker.ID),
			zap.Uint64("batch", idx), zap.Error(err))
		return core.Outcome{}, err
	}
	return w.commit(ctx, j, idx, rc, jd)
}

// resultOf unpacks a worker's result.
func resultOf(r any) (*arbiterv1.DatagenBatchResult, error) {
	a, ok := r.(*anypb.Any)
	if !ok || a == nil {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "a dataset batch needs a DatagenBatchResult")
	}
	if len(a.GetValue()) > MaxShardBytes+64 {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "shard of %d bytes: at most %d", len(a.GetValue()), MaxShardBytes)
	}
	res := &arbiterv1.DatagenBatchResult{}
	if err := a.UnmarshalTo(res); err != nil {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "a dataset batch needs a DatagenBatchResult: %v", err)
	}
	return res, nil
}

// judge replays a shard against its batch. Every refusal is
// IMPLAUSIBLE_RESULT (or MALFORMED_RESULT for bytes that do not decode),
// naming the game and ply.
func judge(data []byte, s dg.Settings, f dg.Filters, seed uint64, games int) (*judged, error) {
	if len(data) == 0 || len(data) > MaxShardBytes {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonTooLarge, "shard of %d bytes: want 1 to %d", len(data), MaxShardBytes)
	}
	lim := dg.DefaultLimits()
	lim.MaxGames = games
	lim.MaxPlies = 2*s.Adjudication.MaxMoves + s.RandomPliesMax + 2
	lim.MaxBytes = 16 * int64(games) * int64(lim.MaxPlies+64)
	gs, err := dg.DecodeShard(bytes.NewReader(data), lim)
	if err != nil {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonMalformedResult, "shard: %v", err)
	}
	if len(gs) != games {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonImplausibleResult, "shard holds %d games; the batch has %d", len(gs), games)
	}
	if err := dg.CheckBatch(s, seed, gs); err != nil {
		return nil, apierr.New(apierr.InvalidArgument, apierr.ReasonImplausibleResult, "shard: %v", err)
	}
	jd := &judged{data: data, games: gs}
	for gi, g := range gs {
		for _, r := range dg.Records(g, f) {
			jd.keys = append(jd.keys, dg.PositionKey(r.FEN))
			jd.scores = append(jd.scores, r.Score)
			jd.pieces = append(jd.pieces, pieceCount(r.FEN))
			jd.gameOf = append(jd.gameOf, gi)
		}
	}
	jd.records = len(jd.keys)
	return jd, nil
}

// pieceCount counts the pieces of a FEN's placement.
func pieceCount(fen string) int {
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return 0
	}
	return bits.OnesCount64(uint64(pos.Occupied()))
}

// commit decides the shard's duplicates and cut in acceptance order, and
// stores its file and row (and, when it completes the job, the job's end)
// before the worker is told.
func (w *Workload) commit(ctx context.Context, j *job, idx uint64, rc core.ResultCall, jd *judged) (core.Outcome, error) {
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	w.mu.Lock()
	if !j.running() {
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Discarded, EndUnitLeases: true}, nil
	}
	if j.stored[idx] {
		j.release(idx, rc.Worker.ID)
		w.mu.Unlock()
		return core.Outcome{Verdict: core.Duplicate, EndUnitLeases: true}, nil
	}
	goal := j.spec.GetPositions()
	keep := j.spec.GetKeepDuplicates()
	row := &shardRow{JobID: j.rec.ID, Batch: idx, Seq: j.shardSeq, UnitID: rc.Lease.UnitID, Bytes: int64(len(jd.data)),
		Games: len(jd.games), Records: jd.records, WorkerID: rc.Worker.ID, ElapsedMS: rc.Elapsed.Milliseconds(),
		At: w.deps.Now()}
	row.Take = countShard(row, jd, j.seen, keep, goal-min(j.prog.positions, goal))
	row.Positions = row.Take
	fresh := make(map[[16]byte]struct{}, len(jd.keys))
	for _, k := range jd.keys {
		fresh[k] = struct{}{}
	}
	w.mu.Unlock()

	sha, err := w.writeShard(jd.data)
	if err != nil {
		return core.Outcome{}, apierr.Store(err)
	}
	row.SHA256 = sha
	var done *store.JobChange
	if j.prog.positions+row.Positions >= goal {
		done = &store.JobChange{State: store.StateDone, FinishedAt: w.deps.Now()}
	}
	if err := commitShard(ctx, w.store, row, done); err != nil {
		return core.Outcome{}, apierr.Store(err)
	}

	w.mu.Lock()
	for k := range fresh {
		j.seen[k] = struct{}{}
	}
	w.count(j, row)
	delete(j.open, idx)
	// A batch whose lease expired went back to be served again; its shard
	// came in after all, so it is not served again.
	for i, r := range j.retry {
		if r == idx {
			j.retry = append(j.retry[:i], j.retry[i+1:]...)
			break
		}
	}
	if done != nil {
		w.finish(j, done)
	}
	w.mu.Unlock()
	w.met.shard(row)
	if w.host != nil {
		w.host.JobChanged(j.rec.ID)
		w.host.WorkAvailable()
	}
	return core.Outcome{Verdict: core.Accepted, EndUnitLeases: true, JobOver: done != nil}, nil
}

// countShard decides which of a shard's records count, in record order:
// a record whose position an earlier one of the job or of the shard had is
// a duplicate (dropped unless keep), and no more than room count; what lies
// past the record that fills the room is not in the dataset, so its
// duplicates are not counted either (as a pull reads the shard). It fills
// in row's dropped indexes and its statistics, those of the records that
// count and of the games they come from (what a pull of the dataset holds),
// and returns how many count.
func countShard(row *shardRow, jd *judged, seen map[[16]byte]struct{}, keep bool, room uint64) uint64 {
	st := &row.Stats
	st.Score, st.Length, st.Pieces = make([]uint64, scoreBuckets), make([]uint64, lengthBuckets), make([]uint64, pieceBuckets)
	fresh := make(map[[16]byte]struct{}, len(jd.keys))
	used := make([]bool, len(jd.games))
	var counted uint64
	for i, k := range jd.keys {
		if counted == room {
			break
		}
		_, before := seen[k]
		_, inShard := fresh[k]
		fresh[k] = struct{}{}
		if before || inShard {
			st.Duplicates++
			if !keep {
				row.Dropped = append(row.Dropped, uint32(i))
				continue
			}
		}
		counted++
		used[jd.gameOf[i]] = true
		st.Score[scoreBucket(jd.scores[i])]++
		st.Pieces[pieceBucket(jd.pieces[i])]++
	}
	for gi, g := range jd.games {
		if !used[gi] {
			continue
		}
		st.Games++
		switch g.Result {
		case dg.WhiteWins:
			st.WhiteWins++
		case dg.BlackWins:
			st.BlackWins++
		default:
			st.Draws++
		}
		st.Plies += uint64(len(g.Moves))
		st.Length[lengthBucket(len(g.Moves))]++
	}
	return counted
}

// release forgets worker's lease on batch idx, whose shard is already
// stored: the core ends the lease that delivered a result without telling
// the workload (Ended), so a copy of a stored batch would otherwise stay
// open and keep fresh batches from being handed out. Caller holds mu.
func (j *job) release(idx uint64, worker string) {
	if j.open[idx] == worker {
		delete(j.open, idx)
	}
}

// count adds a stored shard to j's memory. Caller holds mu (or is
// loading).
func (w *Workload) count(j *job, row *shardRow) {
	j.prog.add(row)
	j.shardSeq = row.Seq + 1
	if j.stored != nil {
		j.stored[row.Batch] = true
	}
	s := j.workers[row.WorkerID]
	if s == nil {
		s = &share{}
		j.workers[row.WorkerID] = s
	}
	s.positions += row.Positions
	s.games += row.Stats.Games
	s.batches++
	s.seconds += float64(row.ElapsedMS) / 1000
}
