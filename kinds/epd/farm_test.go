package epd

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

var twoEngines = []*arbiterv1.EngineSpec{{Name: "a", Command: "embedded"}, {Name: "b", Command: "embedded"}}

// TestSpecRoundTrip: a suite's wire spec validates back to the same
// positions (WAC and a Chess960 line).
func TestSpecRoundTrip(t *testing.T) {
	s := suite(t, "wac.epd", 0)
	s960, err := ParseSuite("960.epd", []byte("1r1k2r1/pppppppp/8/8/8/8/PPPPPPPP/1R1K2R1 w GBgb - bm O-O; id c;"))
	if err != nil {
		t.Fatal(err)
	}
	s.Positions = append(s.Positions, s960.Positions...)
	spec := SpecOf(s, twoEngines, Limit{Nodes: 1000}, 7)
	back, limit, err := ValidateSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	if limit != (Limit{Nodes: 1000}) || len(back.Positions) != len(s.Positions) {
		t.Fatalf("limit %v, %d positions", limit, len(back.Positions))
	}
	for i := range s.Positions {
		a, b := s.Positions[i], back.Positions[i]
		if a.ID != b.ID || a.FEN != b.FEN || a.Line != b.Line || a.Chess960 != b.Chess960 || !slices.Equal(a.Best, b.Best) || !slices.Equal(a.Avoid, b.Avoid) {
			t.Fatalf("position %d: %+v became %+v", i, a, b)
		}
	}
}

// TestSpecRefusals: what a coordinator must not take from a client; the
// control is the valid spec each case is made from.
func TestSpecRefusals(t *testing.T) {
	base := func() *arbiterv1.EpdSpec {
		return SpecOf(suite(t, "bratko-kopec.epd", 3), twoEngines, Limit{MoveTime: time.Second}, 0)
	}
	if _, _, err := ValidateSpec(base()); err != nil {
		t.Fatalf("control: %v", err)
	}
	for _, c := range []struct {
		name   string
		change func(*arbiterv1.EpdSpec)
		want   string
	}{
		{"no engines", func(s *arbiterv1.EpdSpec) { s.Engines = nil }, "0 engines"},
		{"too many engines", func(s *arbiterv1.EpdSpec) {
			for range MaxEngines {
				s.Engines = append(s.Engines, twoEngines[0])
			}
		}, "18 engines"},
		{"no limit", func(s *arbiterv1.EpdSpec) { s.Limit = nil }, "limit: not set"},
		{"two limits", func(s *arbiterv1.EpdSpec) { s.Limit.Nodes = 5 }, "exactly one"},
		{"huge nodes", func(s *arbiterv1.EpdSpec) { s.Limit = &arbiterv1.EpdLimit{Nodes: 1 << 62} }, "nodes"},
		{"no positions", func(s *arbiterv1.EpdSpec) { s.Positions = nil }, "0 positions"},
		{"SAN on the wire", func(s *arbiterv1.EpdSpec) { s.Positions[1].BestMoves = []string{"d5"} }, `position 1: "BK.02": move "d5" is not in UCI`},
		{"illegal move", func(s *arbiterv1.EpdSpec) { s.Positions[2].BestMoves = []string{"a1a8"} }, "position 2"},
		{"no moves", func(s *arbiterv1.EpdSpec) { s.Positions[0].BestMoves = nil }, "no bm or am"},
		{"illegal position", func(s *arbiterv1.EpdSpec) { s.Positions[0].Fen = "8/8/8/8/8/8/8/8 w - - 0 1" }, "not legal"},
		{"operations smuggled in the FEN", func(s *arbiterv1.EpdSpec) { s.Positions[0].Fen += " ; am d6d1" }, "position 0"},
		{"chess960 flag", func(s *arbiterv1.EpdSpec) { s.Positions[0].Chess960 = true }, "chess960"},
		{"duplicate id", func(s *arbiterv1.EpdSpec) { s.Positions[2].Id = s.Positions[0].Id }, "already position 0's"},
		{"empty id", func(s *arbiterv1.EpdSpec) { s.Positions[2].Id = "" }, "id of 0 bytes"},
		{"batch size", func(s *arbiterv1.EpdSpec) { s.BatchPositions = MaxBatchPositions + 1 }, "batch_positions"},
		{"nil engine", func(s *arbiterv1.EpdSpec) { s.Engines[1] = nil }, "engine 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.change(s)
			if _, _, err := ValidateSpec(s); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestBatchesCoverOnce: every (engine, position) pair is in exactly one
// batch, batch indexes run 0..n-1.
func TestBatchesCoverOnce(t *testing.T) {
	spec := SpecOf(suite(t, "wac.epd", 0), twoEngines, Limit{Nodes: 1}, 7)
	seen := map[[2]uint32]int{}
	for i, b := range Batches(spec) {
		if b.Batch != uint32(i) || len(b.Positions) == 0 || len(b.Positions) > 7 {
			t.Fatalf("batch %d: %v", i, b)
		}
		for _, p := range b.Positions {
			seen[[2]uint32{b.Engine, p}]++
		}
	}
	if len(seen) != 2*299 {
		t.Fatalf("%d pairs covered, want %d", len(seen), 2*299)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("pair %v in %d batches", k, n)
		}
	}
}

// batchResults answers each batch from a local run's results.
func batchResults(spec *arbiterv1.EpdSpec, results []Result) []*arbiterv1.EpdResult {
	nEng := len(spec.Engines)
	var out []*arbiterv1.EpdResult
	for _, b := range Batches(spec) {
		r := &arbiterv1.EpdResult{Batch: b.Batch, Engine: b.Engine}
		for _, p := range b.Positions {
			r.Positions = append(r.Positions, ResultProto(results[int(p)*nEng+int(b.Engine)]))
		}
		out = append(out, r)
	}
	return out
}

// TestMergeExact: the batches of a real run (the embedded engine under
// two names), merged in a shuffled order with every batch sent twice,
// give the run's results exactly (times to the millisecond); a differing
// repeat, a forged verdict and foreign answers change nothing.
func TestMergeExact(t *testing.T) {
	s := suite(t, "bratko-kopec.epd", 0)
	a, b := builtinEngine, builtinEngine
	a.Name, b.Name = "a", "b"
	b.Options = append(b.Options, match.Option{Name: "Hash", Value: "1"})
	results, err := Run(context.Background(), RunConfig{Suite: s, Engines: []match.EngineConfig{a, b}, Limit: Limit{Nodes: 3000}, Builtin: builtin.New})
	if err != nil {
		t.Fatal(err)
	}
	spec := SpecOf(s, twoEngines, Limit{Nodes: 3000}, 5)
	vs, _, err := ValidateSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMerger(spec, vs)
	answers := batchResults(spec, results)
	sends := append(slices.Clone(answers), answers...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(sends), func(i, j int) { sends[i], sends[j] = sends[j], sends[i] })
	added := 0
	for _, r := range sends {
		ok, err := m.Add(proto.Clone(r).(*arbiterv1.EpdResult))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			added++
		}
		if !m.Done() {
			// A differing repeat of a merged batch is refused.
			forged := proto.Clone(r).(*arbiterv1.EpdResult)
			forged.Positions[0].Nodes++
			if ok, err := m.Add(forged); ok || err == nil {
				t.Fatalf("a differing repeat of batch %d was taken", r.Batch)
			}
		}
	}
	if added != len(answers) || !m.Done() {
		t.Fatalf("added %d of %d batches, done %v", added, len(answers), m.Done())
	}
	got := m.Results()
	if len(got) != len(results) {
		t.Fatalf("%d results, want %d", len(got), len(results))
	}
	for i := range results {
		want := results[i]
		want.SolveTime = want.SolveTime.Truncate(time.Millisecond)
		want.Elapsed = want.Elapsed.Truncate(time.Millisecond)
		if got[i] != want {
			t.Fatalf("result %d: merged %+v, ran %+v", i, got[i], want)
		}
	}
	// The table of the merge is the run's (mean times to the millisecond).
	gt, rt := Table(EngineNames(spec), got), Table(EngineNames(spec), results)
	for i := range gt {
		gt[i].MeanSolveTime, rt[i].MeanSolveTime = 0, 0
		if gt[i] != rt[i] {
			t.Errorf("table row %d: merged %+v, ran %+v", i, gt[i], rt[i])
		}
	}
}

// TestMergeRefusals: a worker's claim is checked, not trusted.
func TestMergeRefusals(t *testing.T) {
	s := suite(t, "bratko-kopec.epd", 0)
	spec := SpecOf(s, twoEngines, Limit{Nodes: 10}, 5)
	vs, _, err := ValidateSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(batch uint32, move string) *arbiterv1.EpdResult {
		b := Batches(spec)[batch]
		r := &arbiterv1.EpdResult{Batch: batch, Engine: b.Engine}
		for _, p := range b.Positions {
			r.Positions = append(r.Positions, &arbiterv1.EpdPositionResult{Position: p, Move: move, Solved: true, SolveDepth: 3, SolveTimeMs: 9})
		}
		return r
	}
	m := NewMerger(spec, vs)
	for _, c := range []struct {
		name string
		r    *arbiterv1.EpdResult
		want string
	}{
		{"no such batch", &arbiterv1.EpdResult{Batch: 99}, "no batch 99"},
		{"nil", nil, "no batch"},
		{"wrong engine", func() *arbiterv1.EpdResult { r := answer(0, ""); r.Engine = 1; return r }(), "engine 0's, not 1's"},
		{"missing position", func() *arbiterv1.EpdResult { r := answer(0, ""); r.Positions = r.Positions[1:]; return r }(), "has 5 positions, the result 4"},
		{"other position", func() *arbiterv1.EpdResult { r := answer(0, ""); r.Positions[0].Position = 7; return r }(), "want position 0's"},
		{"illegal move", answer(0, "a1a1"), "not legal"},
		{"absurd depth", func() *arbiterv1.EpdResult { r := answer(0, ""); r.Positions[0].Depth = 1 << 20; return r }(), "more than 1000"},
	} {
		if ok, err := m.Add(c.r); ok || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v %v, want %q", c.name, ok, err, c.want)
		}
	}
	if merged, _ := m.Progress(); merged != 0 {
		t.Fatalf("refused results were merged: %d", merged)
	}
	// A forged verdict: "solved" with a move that is not BK.01's bm
	// counts as unsolved; the real bm counts as solved.
	r := answer(0, "")
	r.Positions[0].Move, r.Positions[1].Move = "d6d5", "d4d5" // BK.01 wants d6d1, BK.02 d4d5
	if ok, err := m.Add(r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	got := m.Results()
	if got[0].Solved || got[0].SolveDepth != 0 || !got[1].Solved || got[1].SolveDepth != 3 || got[2].Solved {
		t.Errorf("verdicts not recomputed: %+v", got[:3])
	}
}
