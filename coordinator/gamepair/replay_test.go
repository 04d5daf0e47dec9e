package gamepair_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/worker/gamepairs"
)

// honestBatch is a batch whose games end in many ways: mates from a mating
// net, insufficient material from the first position, a pawn ending that
// runs into the fifty-move rule or a repetition, and adjudications of all
// three kinds at low node counts.
func honestBatch() *arbiterv1.GamePairBatch {
	return &arbiterv1.GamePairBatch{
		TestId:      "t1",
		EngineA:     &arbiterv1.EngineSpec{Name: "new \"dev\"", Command: "embedded", Options: map[string]string{"Hash": "1"}},
		EngineB:     &arbiterv1.EngineSpec{Name: "base", Command: "embedded", Options: map[string]string{"Hash": "1", "RFPMargin": "40"}},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 400}},
		Openings: []*arbiterv1.Opening{
			{Index: 0, MovesUci: []string{"e2e4", "e7e5", "g1f3"}},
			{Index: 1, Fen: "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"},
			{Index: 2, Fen: "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"},
			{Index: 3, Fen: "8/8/4k3/8/8/4K3/4N3/8 b - - 0 1"},                                   // insufficient at once
			{Index: 4, Fen: "6k1/5ppp/8/8/8/8/5PPP/3R2K1 b - - 0 1", MovesUci: []string{"h7h6"}}, // a rook up
			{Index: 5, Fen: "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"}, // Chess960
		},
		Adjudication: &arbiterv1.Adjudication{MaxMoves: 60, ResignMoveCount: 3, ResignScoreCp: 600, DrawMoveCount: 8, DrawScoreCp: 5, DrawMoveNumber: 30},
		Seed:         3,
	}
}

func play(t testing.TB, b *arbiterv1.GamePairBatch) *arbiterv1.GamePairBatchResult {
	t.Helper()
	res, err := gamepairs.PlayBatch(context.Background(), b, builtin.New)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gamepair.CheckResult("t1.0", len(b.GetOpenings()), res); err != nil {
		t.Fatalf("an honest result is not even well-formed: %v", err)
	}
	return res
}

// Honest batches replay: the worker's own games pass, whatever their end.
func TestReplayHonestBatches(t *testing.T) {
	seen := map[arbiterv1.GameTermination]int{}
	for _, mod := range []func(b *arbiterv1.GamePairBatch){
		func(*arbiterv1.GamePairBatch) {},
		func(b *arbiterv1.GamePairBatch) { b.Adjudication = nil },
		func(b *arbiterv1.GamePairBatch) {
			b.TimeControl = &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Depth{Depth: 2}}
			b.Adjudication = &arbiterv1.Adjudication{MaxMoves: 15}
		},
	} {
		b := honestBatch()
		mod(b)
		res := play(t, b)
		if err := gamepair.ReplayBatch("t1.0", b, res); err != nil {
			t.Fatalf("an honest batch is refused: %v", err)
		}
		for _, g := range res.GetGames() {
			seen[g.GetTermination()]++
		}
	}
	t.Logf("terminations replayed: %v", seen)
	for _, want := range []arbiterv1.GameTermination{arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE,
		arbiterv1.GameTermination_GAME_TERMINATION_INSUFFICIENT_MATERIAL, arbiterv1.GameTermination_GAME_TERMINATION_ADJUDICATION} {
		if seen[want] == 0 {
			t.Errorf("no game ended %s: the test does not cover it", want)
		}
	}
}

// A forged game is refused with INVALID_GAME and a reason naming the game.
func TestReplayRefusesForgeries(t *testing.T) {
	b := honestBatch()
	b.Openings = b.Openings[:3]
	honest := play(t, b)
	if err := gamepair.ReplayBatch("t1.0", b, honest); err != nil {
		t.Fatalf("honest: %v", err)
	}
	mateIn1 := 4 // the pair on "7k/5Q2/6K1/...": both games are Qe8#
	if !strings.Contains(honest.GetPgns()[mateIn1], "Qe8#") {
		t.Fatalf("game %d is not the mate in one: %s", mateIn1, honest.GetPgns()[mateIn1])
	}
	claim := func(r *arbiterv1.GamePairBatchResult, k int, res arbiterv1.GameResult, term arbiterv1.GameTermination) {
		r.Games[k].Result, r.Games[k].Termination = res, term
	}
	white, black, draw := arbiterv1.GameResult_GAME_RESULT_WHITE_WINS, arbiterv1.GameResult_GAME_RESULT_BLACK_WINS, arbiterv1.GameResult_GAME_RESULT_DRAW
	mate := arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE
	setPGN := func(r *arbiterv1.GamePairBatchResult, k int, from, to string) {
		if !strings.Contains(r.Pgns[k], from) {
			t.Fatalf("game %d has no %q:\n%s", k, from, r.Pgns[k])
		}
		r.Pgns[k] = strings.Replace(r.Pgns[k], from, to, 1)
	}
	for _, c := range []struct {
		name, want string
		forge      func(r *arbiterv1.GamePairBatchResult)
	}{
		{"1. e4 * claimed as a mate", "Result tag", func(r *arbiterv1.GamePairBatchResult) {
			r.Pgns[0] = "[Event \"x\"]\n[White \"new \\\"dev\\\"\"]\n[Black \"base\"]\n[Result \"1-0\"]\n\n1. e4 *\n\n"
			claim(r, 0, white, mate)
		}},
		{"1. e4 1-0 claimed as a mate", "not over by the rules", func(r *arbiterv1.GamePairBatchResult) {
			r.Pgns[0] = "[White \"new \\\"dev\\\"\"]\n[Black \"base\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 {book} 1-0\n"
			claim(r, 0, white, mate)
		}},
		{"result flipped everywhere", "final position is checkmate", func(r *arbiterv1.GamePairBatchResult) {
			setPGN(r, mateIn1, `[Result "1-0"]`, `[Result "0-1"]`)
			setPGN(r, mateIn1, "} 1-0", "} 0-1")
			claim(r, mateIn1, black, mate)
		}},
		{"a mate claimed as a draw by repetition", "final position is checkmate", func(r *arbiterv1.GamePairBatchResult) {
			setPGN(r, mateIn1, `[Result "1-0"]`, `[Result "1/2-1/2"]`)
			setPGN(r, mateIn1, "} 1-0", "} 1/2-1/2")
			claim(r, mateIn1, draw, arbiterv1.GameTermination_GAME_TERMINATION_REPETITION)
		}},
		{"an illegal move", "illegal", func(r *arbiterv1.GamePairBatchResult) { setPGN(r, mateIn1, "Qe8#", "Qa8#") }},
		{"moves after the mate", "after the game ended", func(r *arbiterv1.GamePairBatchResult) {
			setPGN(r, mateIn1, "Qe8#", "Qe8# {+M1/1 0.001s} Kxg7 {-M1/1 0.001s} 2. Kf5")
		}},
		{"colours not swapped", "White", func(r *arbiterv1.GamePairBatchResult) { r.Pgns[0], r.Pgns[1] = r.Pgns[1], r.Pgns[0] }},
		{"another pair's opening", "FEN", func(r *arbiterv1.GamePairBatchResult) { r.Pgns[2], r.Pgns[4] = r.Pgns[4], r.Pgns[2] }},
		{"opening moves changed", "the opening plays", func(r *arbiterv1.GamePairBatchResult) { setPGN(r, 0, "1. e4 {book}", "1. d4 {book}") }},
		{"a crash with no incident", "no such incident", func(r *arbiterv1.GamePairBatchResult) {
			r.Pgns[mateIn1] = strings.Replace(r.Pgns[mateIn1][:strings.Index(r.Pgns[mateIn1], "1. Qe8#")], "1-0", "0-1", 1) + "{White's engine crashed} 0-1\n"
			claim(r, mateIn1, black, arbiterv1.GameTermination_GAME_TERMINATION_CRASH)
		}},
		{"a time forfeit at fixed nodes", "no clock or move time", func(r *arbiterv1.GamePairBatchResult) {
			r.Pgns[mateIn1] = strings.Replace(r.Pgns[mateIn1][:strings.Index(r.Pgns[mateIn1], "1. Qe8#")], "1-0", "0-1", 1) + "0-1\n"
			claim(r, mateIn1, black, arbiterv1.GameTermination_GAME_TERMINATION_TIME_FORFEIT)
			r.Incidents = append(r.Incidents, &arbiterv1.Incident{Kind: arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS, GameIndex: uint32(mateIn1), Engine: "new \"dev\""})
		}},
		{"a resignation of a UCI engine", "only an xboard engine", func(r *arbiterv1.GamePairBatchResult) {
			r.Pgns[mateIn1] = strings.Replace(r.Pgns[mateIn1][:strings.Index(r.Pgns[mateIn1], "1. Qe8#")], "1-0", "0-1", 1) + "0-1\n"
			claim(r, mateIn1, black, arbiterv1.GameTermination_GAME_TERMINATION_RESIGN)
		}},
		{"an adjudication the thresholds do not support", "thresholds", func(r *arbiterv1.GamePairBatchResult) {
			setPGN(r, mateIn1, "Qe8#", "Qf8+")
			setPGN(r, mateIn1, "} 1-0", "} 1/2-1/2")
			setPGN(r, mateIn1, `[Result "1-0"]`, `[Result "1/2-1/2"]`)
			claim(r, mateIn1, draw, arbiterv1.GameTermination_GAME_TERMINATION_ADJUDICATION)
		}},
		{"a variation", "movetext", func(r *arbiterv1.GamePairBatchResult) { setPGN(r, mateIn1, "Qe8#", "Qe8# (1. Qf8+)") }},
		{"two games in one", "after the result", func(r *arbiterv1.GamePairBatchResult) { r.Pgns[mateIn1] += r.Pgns[mateIn1] }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := proto.Clone(honest).(*arbiterv1.GamePairBatchResult)
			c.forge(r)
			err := gamepair.ReplayBatch("t1.0", b, r)
			if err == nil {
				t.Fatal("accepted")
			}
			if apierr.ReasonOf(err) != apierr.ReasonInvalidGame || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("refused as %s: %v; want %s and %q", apierr.ReasonOf(err), err, apierr.ReasonInvalidGame, c.want)
			}
			t.Log(err)
		})
	}
}

// BenchmarkReplayBatch is the coordinator's cost of checking one batch of
// 16 pairs of full games (their PGNs replayed move by move).
func BenchmarkReplayBatch(b *testing.B) {
	batch := honestBatch()
	batch.Openings = nil
	for i := range 16 {
		batch.Openings = append(batch.Openings, &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{[]string{"e2e4", "d2d4", "c2c4", "g1f3"}[i%4]}})
	}
	batch.Adjudication = nil
	res := play(b, batch)
	plies := 0
	for _, p := range res.GetPgns() {
		plies += strings.Count(p, "s}") + strings.Count(p, "{book}")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := gamepair.ReplayBatch("t1.0", batch, res); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(plies), "plies/batch")
}

// FuzzReplayGame: whatever a worker sends as a game, the replay answers
// without panicking, refuses it as INVALID_GAME or accepts it, and accepts
// none whose Result tag is not its outcome.
func FuzzReplayGame(f *testing.F) {
	const fen = "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"
	mate := func(white, black, res string) string {
		return "[Event \"x\"]\n[White \"" + white + "\"]\n[Black \"" + black + "\"]\n[Result \"" + res + "\"]\n[SetUp \"1\"]\n[FEN \"" + fen + "\"]\n\n1. Qe8# {+M1/5 0.000s} {White mates} " + res + "\n\n"
	}
	f.Add(mate("a", "b", "1-0"), int32(1), int32(1))
	f.Add("[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\n1. e4 *\n", int32(1), int32(1))
	f.Add("[White \"a\"]\n[Black \"b\"]\n[Result \"1/2-1/2\"]\n[FEN \""+fen+"\"]\n\n1. Qf8+ {+0.00/1 0.1s} Kh7 {-0.00/1\n0.1s} 2. Qf7+ $1 Kh8 1/2-1/2", int32(3), int32(7))
	b := &arbiterv1.GamePairBatch{
		EngineA:      &arbiterv1.EngineSpec{Name: "a", Command: "embedded"},
		EngineB:      &arbiterv1.EngineSpec{Name: "b", Command: "embedded"},
		TimeControl:  &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 100}},
		Openings:     []*arbiterv1.Opening{{Fen: fen}},
		Adjudication: &arbiterv1.Adjudication{DrawMoveCount: 1, DrawScoreCp: 5, ResignMoveCount: 1, ResignScoreCp: 500, MaxMoves: 3},
	}
	f.Fuzz(func(t *testing.T, pgn string, result, term int32) {
		r := &arbiterv1.GamePairBatchResult{
			Pgns: []string{pgn, mate("b", "a", "1-0")},
			Games: []*arbiterv1.GameOutcome{
				{GameIndex: 0, Result: arbiterv1.GameResult(result), Termination: arbiterv1.GameTermination(term)},
				{GameIndex: 1, Result: arbiterv1.GameResult_GAME_RESULT_WHITE_WINS, Termination: arbiterv1.GameTermination_GAME_TERMINATION_CHECKMATE},
			},
			Incidents: []*arbiterv1.Incident{{Kind: arbiterv1.IncidentKind_INCIDENT_KIND_CRASH, Engine: "b"}},
		}
		err := gamepair.ReplayBatch("t1.0", b, r)
		if err != nil && apierr.ReasonOf(err) != apierr.ReasonInvalidGame {
			t.Fatalf("refused with reason %q: %v", apierr.ReasonOf(err), err)
		}
		if err == nil && !strings.Contains(pgn, "[Result \""+map[int32]string{1: "1-0", 2: "0-1", 3: "1/2-1/2"}[result]+"\"]") {
			t.Fatalf("a game accepted whose Result tag is not its outcome %v:\n%s", arbiterv1.GameResult(result), pgn)
		}
	})
}
