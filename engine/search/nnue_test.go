package search

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/eval"
	"github.com/arbiter-chess/arbiter/engine/nnue"
)

// refreshEval evaluates with the net from scratch at every node: the
// reference the search's incremental accumulators must agree with.
type refreshEval struct{ net *nnue.Net }

func (r refreshEval) Evaluate(p *engine.Position) int {
	return min(max(r.net.EvaluatePosition(p), -eval.MaxEval), eval.MaxEval)
}

func writeNet(t testing.TB, n *nnue.Net) string {
	t.Helper()
	data, err := n.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "net.nnue")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNNUESearchMatchesRefresh searches with UseNNUE (accumulators updated
// lazily along the line, through captures, castling, en passant,
// promotions, null moves and Chess960 castling) and with an evaluator that
// refreshes at every node: any accumulator that went wrong changes a score,
// and so the node count, the score or the move.
func TestNNUESearchMatchesRefresh(t *testing.T) {
	net := nnue.NewRandom(11)
	path := writeNet(t, net)
	fens := append([]string{}, BenchPositions[:12]...)
	fens = append(fens,
		"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
		"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
	)
	chess960 := []string{
		"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
		"1rk3r1/pp3ppp/8/8/8/8/PP3PPP/1RK3R1 w GBgb - 0 1",
	}
	for i, fen := range append(fens, chess960...) {
		is960 := i >= len(fens)
		opts := map[string]string{OptUseNNUE: "true", OptEvalFile: path}
		ref := map[string]string{OptUseNNUE: "false"} // its evaluator is refreshEval
		if is960 {
			opts[OptChess960], ref[OptChess960] = "true", "true"
		}
		inc := newTestEngine(t, opts)
		full := newTestEngine(t, ref)
		full.SetEvaluator(refreshEval{net})
		p := mustFEN(t, fen)
		p.SetChess960(is960)
		m1, i1 := inc.Go(context.Background(), p, nil, Limits{Depth: 6})
		m2, i2 := full.Go(context.Background(), p, nil, Limits{Depth: 6})
		if m1 != m2 || i1.Score != i2.Score || i1.Nodes != i2.Nodes {
			t.Errorf("%s: incremental %s score %d nodes %d, refreshing %s score %d nodes %d",
				fen, p.UCIMove(m1), i1.Score, i1.Nodes, p.UCIMove(m2), i2.Score, i2.Nodes)
		}
	}
}

// TestNNUEOptions: the embedded net is the default when there is one; a bad
// EvalFile is refused with the file and what is wrong; UseNNUE needs a net.
func TestNNUEOptions(t *testing.T) {
	e := newTestEngine(t, nil)
	for _, o := range e.Options() {
		if want := strconv.FormatBool(embedsNet()); o.Name == OptUseNNUE && o.Default != want {
			t.Errorf("UseNNUE defaults to %s, want %s", o.Default, want)
		}
	}
	if def, _ := nnue.DefaultNet(); def == nil {
		if _, err := NewEngine(map[string]string{OptUseNNUE: "true"}); err == nil || !strings.Contains(err.Error(), "no net") {
			t.Errorf("UseNNUE without a net: %v", err)
		}
	}
	dir := t.TempDir()
	good, _ := nnue.NewRandom(1).MarshalBinary()
	trunc := filepath.Join(dir, "trunc.nnue")
	os.WriteFile(trunc, good[:1000], 0o644)
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.nnue"), "no such file"},
		{trunc, "file " + trunc + ": net is 1000 bytes, want 197440"},
	} {
		_, err := NewEngine(map[string]string{OptEvalFile: tc.path, OptUseNNUE: "true"})
		if err == nil || !strings.Contains(err.Error(), `option "EvalFile"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("EvalFile %s: %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
	// UseNNUE waits for EvalFile whatever the spelling of the names.
	if _, err := NewEngine(map[string]string{"evalfile": writeNet(t, nnue.NewRandom(3)), "UseNNUE": "true"}); err != nil {
		t.Errorf("evalfile + UseNNUE: %v", err)
	}
	// Switching live: the net plays, and back.
	path := writeNet(t, nnue.NewRandom(2))
	e = newTestEngine(t, map[string]string{OptEvalFile: path, OptUseNNUE: "false"})
	p := engine.StartPosition()
	_, classic := e.Go(context.Background(), p, nil, Limits{Depth: 5})
	if err := e.SetOption(OptUseNNUE, "true"); err != nil {
		t.Fatal(err)
	}
	_, withNet := e.Go(context.Background(), p, nil, Limits{Depth: 5})
	if err := e.SetOption(OptUseNNUE, "false"); err != nil {
		t.Fatal(err)
	}
	e.NewGame()
	_, again := e.Go(context.Background(), p, nil, Limits{Depth: 5})
	if classic.Nodes == withNet.Nodes && classic.Score == withNet.Score {
		t.Errorf("UseNNUE=true searched like the hand-written evaluation (%d nodes, score %d)", withNet.Nodes, withNet.Score)
	}
	if again.Nodes != classic.Nodes || again.Score != classic.Score {
		t.Errorf("back to the hand-written evaluation: %d nodes score %d, was %d, %d", again.Nodes, again.Score, classic.Nodes, classic.Score)
	}
}

// TestCheckEvalWeights: a weight of the hand-written evaluation is refused
// while the net evaluates, by name, and accepted beside UseNNUE=false.
func TestCheckEvalWeights(t *testing.T) {
	if !embedsNet() {
		t.Skip("this build embeds no net")
	}
	err := CheckEvalWeights(map[string]string{"Hash": "16", "knightvaluemg": "150", "RFPMargin": "90"})
	if err == nil || !strings.Contains(err.Error(), `option "knightvaluemg" is a weight of the hand-written evaluation`) || !strings.Contains(err.Error(), "UseNNUE=false") {
		t.Errorf("eval weight with the net: %v", err)
	}
	for _, ok := range []map[string]string{
		{"KnightValueMG": "150", "usennue": "false"},
		{"RFPMargin": "90"},
		{},
	} {
		if err := CheckEvalWeights(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	if err := CheckEvalWeights(map[string]string{"UseNNUE": "maybe"}); err == nil {
		t.Error("UseNNUE=maybe accepted")
	}
}
