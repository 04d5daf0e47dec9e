package datagen

import (
	"sort"

	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/jobproto"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Histogram shapes (DatagenProgress): scores in 100 cp buckets from -1000
// to +1000 with open ends, game lengths in 20-ply buckets with the last
// open, piece counts 2 to 32.
const (
	scoreBuckets  = 22
	lengthBuckets = 26
	pieceBuckets  = 31
)

// progress is a job's counts.
type progress struct {
	positions, games, shards, duplicates uint64
	whiteWins, draws, blackWins, plies   uint64
	batches                              uint64
	score, length, pieces                []uint64
}

func (p *progress) init() {
	p.score, p.length, p.pieces = make([]uint64, scoreBuckets), make([]uint64, lengthBuckets), make([]uint64, pieceBuckets)
}

// add counts a shard.
func (p *progress) add(r *shardRow) {
	p.positions += r.Positions
	p.games += r.Stats.Games
	p.shards++
	p.batches++
	st := &r.Stats
	p.duplicates += st.Duplicates
	p.whiteWins += st.WhiteWins
	p.draws += st.Draws
	p.blackWins += st.BlackWins
	p.plies += st.Plies
	addHist(p.score, st.Score)
	addHist(p.length, st.Length)
	addHist(p.pieces, st.Pieces)
}

func addHist(dst, src []uint64) {
	for i := range min(len(dst), len(src)) {
		dst[i] += src[i]
	}
}

func scoreBucket(cp int) int { return min(max((cp+1100)/100, 0), scoreBuckets-1) }
func lengthBucket(plies int) int {
	return min(plies/20, lengthBuckets-1)
}
func pieceBucket(n int) int { return min(max(n-2, 0), pieceBuckets-1) }

// Snapshot implements core.Workload.
func (w *Workload) Snapshot(jobID string, full bool) (any, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return nil, false
	}
	return w.snapshot(j, full), true
}

// snapshot renders j. Caller holds mu.
func (w *Workload) snapshot(j *job, full bool) *arbiterv1.Job {
	r := j.rec
	out := &arbiterv1.Job{JobId: r.ID, State: jobproto.State(r.State), Kind: Kind, Error: r.Error, Submitter: r.Submitter,
		CreatedAt: timestamppb.New(r.CreatedAt),
		Progress:  &arbiterv1.JobProgress{UnitsDone: j.prog.batches, ActiveWorkers: uint32(j.activeWorkers())}}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = timestamppb.New(r.FinishedAt)
	}
	if j.running() && len(j.excluded) > 0 && len(j.open) == 0 && j.prog.batches == 0 {
		for _, why := range j.excluded {
			out.Progress.Blocked = "the workers that tried cannot run the engine: " + why
			break
		}
	}
	p := &arbiterv1.DatagenProgress{Positions: min(j.prog.positions, j.spec.GetPositions()), Games: j.prog.games,
		Shards: j.prog.shards, Duplicates: j.prog.duplicates, WhiteWins: j.prog.whiteWins, Draws: j.prog.draws,
		BlackWins: j.prog.blackWins, Plies: j.prog.plies, BatchesLeased: uint32(len(j.open)), BatchesDone: j.prog.batches}
	end := w.deps.Now()
	if !r.FinishedAt.IsZero() {
		end = r.FinishedAt
	}
	if secs := end.Sub(r.CreatedAt).Seconds(); secs > 0 {
		p.PositionsPerSecond = float64(p.Positions) / secs
	}
	if full {
		p.ScoreHistogram = append([]uint64(nil), j.prog.score...)
		p.LengthHistogram = append([]uint64(nil), j.prog.length...)
		p.PiecesHistogram = append([]uint64(nil), j.prog.pieces...)
		ids := make([]string, 0, len(j.workers))
		for id := range j.workers {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			s := j.workers[id]
			p.Workers = append(p.Workers, &arbiterv1.DatagenWorker{WorkerId: id, Name: w.names[id], Positions: s.positions,
				Games: s.games, Batches: s.batches, Seconds: s.seconds, Refused: s.refused})
		}
	}
	detail, err := anypb.New(&arbiterv1.DatagenJob{Spec: j.spec, Progress: p})
	if err == nil {
		out.Detail = detail
	}
	return out
}

func (j *job) activeWorkers() int {
	seen := map[string]bool{}
	for _, wk := range j.open {
		seen[wk] = true
	}
	return len(seen)
}

// Stats implements core.Workload.
func (w *Workload) Stats() core.Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := workload.JobStats(Kind, w.jobs, func(j *job) string { return j.rec.State })
	for _, j := range w.running {
		st.Units["leased"] += len(j.open)
		st.Units["done"] += int(j.prog.batches)
		st.Units["queued"] += len(j.retry)
	}
	return st
}

// Describe implements core.Describer.
func (w *Workload) Describe(jobID string) (core.JobInfo, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := w.jobs[jobID]
	if j == nil {
		return core.JobInfo{}, false
	}
	return core.JobInfo{ID: jobID, Kind: Kind, State: j.rec.State, Submitter: j.rec.Submitter,
		Started: j.prog.batches > 0 || len(j.open) > 0}, true
}
