package epd

// The farm's contract, ready for the kind registries: the job's spec as
// the client builds it and the coordinator re-checks it, its split into
// batches, and the exact merge of the batches' results. Nothing here does
// I/O; the coordinator workload and the worker runner call these.
//
// Invariants:
//   - A spec that passes ValidateSpec has 1..MaxEngines engines,
//     1..MaxPositions positions, each a legal position whose bm/am are
//     legal UCI moves in it, and one limit in range.
//   - Batches covers every (engine, position) pair exactly once; batch
//     indexes are 0..n-1 in the order Batches returns them.
//   - Merger counts a batch once: a result for a batch already merged is
//     compared with the first and never added; solved is recomputed from
//     the move, never taken from the worker.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Batch sizes: positions per leased batch.
const (
	DefaultBatchPositions = 10
	MaxBatchPositions     = 1000
)

// SpecOf is the wire spec of a validated suite: the positions with their
// bm and am in UCI notation.
func SpecOf(s *Suite, engines []*arbiterv1.EngineSpec, limit Limit, batchPositions int) *arbiterv1.EpdSpec {
	spec := &arbiterv1.EpdSpec{Engines: slices.Clone(engines), Name: s.Name, BatchPositions: uint32(max(batchPositions, 0)), Limit: limitProto(limit)}
	for i := range s.Positions {
		p := &s.Positions[i]
		spec.Positions = append(spec.Positions, &arbiterv1.EpdPosition{Id: p.ID, Fen: p.FEN, BestMoves: p.Best, AvoidMoves: p.Avoid,
			Line: uint32(p.Line), Chess960: p.Chess960})
	}
	return spec
}

func limitProto(l Limit) *arbiterv1.EpdLimit {
	return &arbiterv1.EpdLimit{MovetimeMs: uint32(l.MoveTime.Milliseconds()), Nodes: uint64(l.Nodes), Depth: uint32(l.Depth)}
}

// LimitOf reads a wire limit.
func LimitOf(p *arbiterv1.EpdLimit) (Limit, error) {
	if p == nil {
		return Limit{}, fmt.Errorf("limit: not set")
	}
	if p.Nodes > MaxNodes {
		return Limit{}, fmt.Errorf("limit: nodes %d: want 1 to %d", p.Nodes, int64(MaxNodes))
	}
	l := Limit{MoveTime: time.Duration(p.MovetimeMs) * time.Millisecond, Nodes: int64(p.Nodes), Depth: int(p.Depth)}
	return l, l.Validate()
}

// ValidateSpec checks a spec as the coordinator receives it (a client's
// validation is not trusted) and returns its suite and limit. Every
// position is parsed again; every error names the position by index and
// id.
func ValidateSpec(spec *arbiterv1.EpdSpec) (*Suite, Limit, error) {
	switch {
	case spec == nil:
		return nil, Limit{}, fmt.Errorf("epd spec: not set")
	case len(spec.Engines) == 0 || len(spec.Engines) > MaxEngines:
		return nil, Limit{}, fmt.Errorf("epd spec: %d engines, want 1 to %d", len(spec.Engines), MaxEngines)
	case len(spec.Positions) == 0 || len(spec.Positions) > MaxPositions:
		return nil, Limit{}, fmt.Errorf("epd spec: %d positions, want 1 to %d", len(spec.Positions), MaxPositions)
	case spec.BatchPositions > MaxBatchPositions:
		return nil, Limit{}, fmt.Errorf("epd spec: batch_positions %d, at most %d", spec.BatchPositions, MaxBatchPositions)
	}
	for i, e := range spec.Engines {
		if e == nil {
			return nil, Limit{}, fmt.Errorf("epd spec: engine %d: not set", i)
		}
	}
	if err := textcheck.Check("epd spec: name", spec.Name); err != nil {
		return nil, Limit{}, err
	}
	limit, err := LimitOf(spec.Limit)
	if err != nil {
		return nil, Limit{}, fmt.Errorf("epd spec: %w", err)
	}
	s := &Suite{Name: spec.Name, Positions: make([]Position, 0, len(spec.Positions))}
	ids := map[string]int{}
	for i, wp := range spec.Positions {
		p, err := positionOf(wp)
		if err != nil {
			return nil, Limit{}, fmt.Errorf("epd spec: position %d: %w", i, err)
		}
		if prev, dup := ids[p.ID]; dup {
			return nil, Limit{}, fmt.Errorf("epd spec: position %d: id %q is already position %d's", i, p.ID, prev)
		}
		ids[p.ID] = i
		s.Positions = append(s.Positions, p)
	}
	return s, limit, nil
}

// positionOf re-parses a wire position: the same checks a suite line
// gets, with the moves in UCI notation.
func positionOf(wp *arbiterv1.EpdPosition) (Position, error) {
	if wp == nil {
		return Position{}, fmt.Errorf("not set")
	}
	switch {
	case wp.Id == "" || len(wp.Id) > MaxIDBytes:
		return Position{}, fmt.Errorf("id of %d bytes: want 1 to %d", len(wp.Id), MaxIDBytes)
	case len(wp.BestMoves) > MaxMovesPerOp || len(wp.AvoidMoves) > MaxMovesPerOp:
		return Position{}, fmt.Errorf("%s: more than %d bm or am moves", clipID(wp.Id), MaxMovesPerOp)
	case len(wp.Fen) > 200:
		return Position{}, fmt.Errorf("%s: a FEN of %d bytes", clipID(wp.Id), len(wp.Fen))
	case strings.ContainsAny(wp.Fen, ";\""):
		// The FEN is pasted before the operations below: it must not end
		// the position itself.
		return Position{}, fmt.Errorf("%s: the FEN holds ';' or '\"'", clipID(wp.Id))
	}
	if err := textcheck.Check("id", wp.Id); err != nil {
		return Position{}, err
	}
	line := wp.Fen + " ;"
	if len(wp.BestMoves) > 0 {
		line += " bm " + strings.Join(wp.BestMoves, " ") + ";"
	}
	if len(wp.AvoidMoves) > 0 {
		line += " am " + strings.Join(wp.AvoidMoves, " ") + ";"
	}
	for _, mv := range append(append([]string(nil), wp.BestMoves...), wp.AvoidMoves...) {
		if !uciRE.MatchString(mv) {
			return Position{}, fmt.Errorf("%s: move %q is not in UCI notation", clipID(wp.Id), mv)
		}
	}
	p, err := parseLine(line, int(wp.Line))
	if err != nil {
		return Position{}, fmt.Errorf("%s: %w", clipID(wp.Id), err)
	}
	if p.Chess960 != wp.Chess960 {
		return Position{}, fmt.Errorf("%s: chess960 is %v but the castling rights say %v", clipID(wp.Id), wp.Chess960, p.Chess960)
	}
	p.ID = wp.Id
	return p, nil
}

func clipID(id string) string { return fmt.Sprintf("%.40q", id) }

// Batches splits a job into leased units: for each engine in order, its
// positions in runs of spec.BatchPositions (DefaultBatchPositions when 0).
// The spec must have passed ValidateSpec.
func Batches(spec *arbiterv1.EpdSpec) []*arbiterv1.EpdBatch {
	size := int(spec.BatchPositions)
	if size == 0 {
		size = DefaultBatchPositions
	}
	var out []*arbiterv1.EpdBatch
	for e := range spec.Engines {
		for from := 0; from < len(spec.Positions); from += size {
			b := &arbiterv1.EpdBatch{Batch: uint32(len(out)), Engine: uint32(e)}
			for i := from; i < min(from+size, len(spec.Positions)); i++ {
				b.Positions = append(b.Positions, uint32(i))
			}
			out = append(out, b)
		}
	}
	return out
}

// ResultProto is the wire form of a result (r.Position is the index into
// the spec's positions).
func ResultProto(r Result) *arbiterv1.EpdPositionResult {
	return &arbiterv1.EpdPositionResult{Position: uint32(r.Position), Solved: r.Solved, Move: r.Move,
		SolveTimeMs: uint32(min(r.SolveTime.Milliseconds(), 1<<31)), SolveDepth: uint32(max(r.SolveDepth, 0)),
		Nodes: uint64(max(r.Nodes, 0)), Depth: uint32(max(r.Depth, 0)), HasScore: r.HasScore,
		ScoreCp: int32(r.Score.CP), ScoreMate: int32(r.Score.Mate), Error: r.Error,
		ElapsedMs: uint32(min(r.Elapsed.Milliseconds(), 1<<31))}
}

// Merger gathers a job's batch results exactly.
type Merger struct {
	spec    *arbiterv1.EpdSpec
	suite   *Suite
	batches []*arbiterv1.EpdBatch
	got     []*arbiterv1.EpdResult // by batch index; nil until merged
	merged  int
}

// NewMerger starts the merge of a validated spec's job.
func NewMerger(spec *arbiterv1.EpdSpec, suite *Suite) *Merger {
	b := Batches(spec)
	return &Merger{spec: spec, suite: suite, batches: b, got: make([]*arbiterv1.EpdResult, len(b))}
}

// Add merges one batch's result. It returns false with no error for a
// repeat equal to the batch's first result, and an error for a result
// that is not an answer to its batch (wrong engine, other positions,
// a move not legal in its position, a field out of range) or a repeat
// that differs; neither changes the merge.
func (m *Merger) Add(r *arbiterv1.EpdResult) (bool, error) {
	if r == nil || int(r.Batch) >= len(m.batches) {
		return false, fmt.Errorf("epd result: no batch %d (the job has %d)", r.GetBatch(), len(m.batches))
	}
	b := m.batches[r.Batch]
	if r.Engine != b.Engine {
		return false, fmt.Errorf("epd result: batch %d is engine %d's, not %d's", r.Batch, b.Engine, r.Engine)
	}
	if len(r.Positions) != len(b.Positions) {
		return false, fmt.Errorf("epd result: batch %d has %d positions, the result %d", r.Batch, len(b.Positions), len(r.Positions))
	}
	checked := &arbiterv1.EpdResult{Batch: r.Batch, Engine: r.Engine, Positions: make([]*arbiterv1.EpdPositionResult, len(r.Positions))}
	for i, pr := range r.Positions {
		c, err := m.check(b.Positions[i], pr)
		if err != nil {
			return false, fmt.Errorf("epd result: batch %d: %w", r.Batch, err)
		}
		checked.Positions[i] = c
	}
	if prev := m.got[r.Batch]; prev != nil {
		if !sameResult(prev, checked) {
			return false, fmt.Errorf("epd result: batch %d: a second result differs from the first (kept the first)", r.Batch)
		}
		return false, nil
	}
	m.got[r.Batch] = checked
	m.merged++
	return true, nil
}

// check validates one position's result and recomputes solved from the
// move: the copy it returns is what counts.
func (m *Merger) check(want uint32, pr *arbiterv1.EpdPositionResult) (*arbiterv1.EpdPositionResult, error) {
	if pr == nil || pr.Position != want {
		return nil, fmt.Errorf("want position %d's result, got position %d's", want, pr.GetPosition())
	}
	if pr.Depth > maxReportedDepth || pr.SolveDepth > maxReportedDepth {
		return nil, fmt.Errorf("position %d: depth %d, solve depth %d: more than %d", want, pr.Depth, pr.SolveDepth, maxReportedDepth)
	}
	pos := &m.suite.Positions[want]
	solved := false
	if pr.Move != "" {
		p := pos.Position()
		mv, err := p.ParseUCIMove(pr.Move)
		if err != nil {
			return nil, fmt.Errorf("position %d (%s): move %q is not legal there", want, clipID(pos.ID), clipMove(pr.Move))
		}
		solved = pos.Solves(mv)
	}
	c := &arbiterv1.EpdPositionResult{Position: want, Solved: solved, Move: pr.Move, Nodes: pr.Nodes, Depth: pr.Depth,
		HasScore: pr.HasScore, ScoreCp: pr.ScoreCp, ScoreMate: pr.ScoreMate, Error: pr.Error, ElapsedMs: pr.ElapsedMs}
	if solved {
		c.SolveTimeMs, c.SolveDepth = pr.SolveTimeMs, pr.SolveDepth
	}
	if len(c.Error) > maxErrorBytes {
		c.Error = strings.ToValidUTF8(c.Error[:maxErrorBytes], "")
	}
	return c, nil
}

// Bounds of what a worker's result may say.
const (
	maxReportedDepth = 1000
	maxErrorBytes    = 500
)

func clipMove(s string) string {
	if len(s) > 10 {
		return s[:10] + "..."
	}
	return s
}

func sameResult(a, b *arbiterv1.EpdResult) bool {
	if a.Batch != b.Batch || a.Engine != b.Engine || len(a.Positions) != len(b.Positions) {
		return false
	}
	for i := range a.Positions {
		x, y := a.Positions[i], b.Positions[i]
		if x.Position != y.Position || x.Solved != y.Solved || x.Move != y.Move || x.SolveTimeMs != y.SolveTimeMs ||
			x.SolveDepth != y.SolveDepth || x.Nodes != y.Nodes || x.Depth != y.Depth || x.HasScore != y.HasScore ||
			x.ScoreCp != y.ScoreCp || x.ScoreMate != y.ScoreMate || x.Error != y.Error || x.ElapsedMs != y.ElapsedMs {
			return false
		}
	}
	return true
}

// Done reports whether every batch is merged.
func (m *Merger) Done() bool { return m.merged == len(m.batches) }

// Progress is batches merged and batches in all.
func (m *Merger) Progress() (merged, total int) { return m.merged, len(m.batches) }

// Results are the merged results so far, position-major as Run returns
// them (engine order within a position).
func (m *Merger) Results() []Result {
	nEng := len(m.spec.Engines)
	slots := make([]*Result, len(m.spec.Positions)*nEng)
	for _, r := range m.got {
		if r == nil {
			continue
		}
		for _, pr := range r.Positions {
			res := resultOf(int(r.Engine), pr)
			slots[res.Position*nEng+res.Engine] = &res
		}
	}
	var out []Result
	for _, s := range slots {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

func resultOf(engineIndex int, pr *arbiterv1.EpdPositionResult) Result {
	return Result{Engine: engineIndex, Position: int(pr.Position), Solved: pr.Solved, Move: pr.Move,
		SolveTime: time.Duration(pr.SolveTimeMs) * time.Millisecond, SolveDepth: int(pr.SolveDepth),
		Nodes: int64(min(pr.Nodes, 1<<62)), Depth: int(pr.Depth), HasScore: pr.HasScore,
		Score: match.Score{CP: int(pr.ScoreCp), Mate: int(pr.ScoreMate)}, Error: pr.Error,
		Elapsed: time.Duration(pr.ElapsedMs) * time.Millisecond}
}

// EngineNames are the spec's engines' names, for Table.
func EngineNames(spec *arbiterv1.EpdSpec) []string {
	names := make([]string, len(spec.Engines))
	for i, e := range spec.Engines {
		names[i] = e.GetName()
	}
	return names
}
