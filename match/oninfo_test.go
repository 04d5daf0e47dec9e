package match_test

import (
	"context"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
)

// TestUCIOnInfo: a real Stockfish reports every pv through
// ThinkRequest.OnInfo as it searches; the depths rise, and the last pv
// begins with the move it plays. The control: without OnInfo the same
// search returns the same kind of reply.
func TestUCIOnInfo(t *testing.T) {
	need(t, stockfish, "stockfish")
	p, err := match.NewUCIPlayer(sf("sf", 20))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Quit()
	ctx := context.Background()
	if err := p.NewGame(ctx, false); err != nil {
		t.Fatal(err)
	}
	// WAC.001: Qg6 mates in 2.
	req := &match.ThinkRequest{StartFEN: "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
		Limits: match.Limits{Depth: 8}, Timeout: time.Minute, White: true}
	var depths []int
	var moves []string
	req.OnInfo = func(report match.Info, pvMove string) {
		depths = append(depths, report.Depth)
		moves = append(moves, pvMove)
	}
	rep, err := p.Think(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(moves) < 3 {
		t.Fatalf("OnInfo called %d times, want one per iteration (depth 8): %v", len(moves), moves)
	}
	if last := moves[len(moves)-1]; last != rep.Move {
		t.Errorf("last pv move %q, bestmove %q", last, rep.Move)
	}
	if rep.Move != "g3g6" {
		t.Errorf("bestmove %q, want g3g6 (WAC.001)", rep.Move)
	}
	for i := 1; i < len(depths); i++ {
		if depths[i] < depths[i-1] {
			t.Errorf("depths not rising: %v", depths)
		}
	}
	req.OnInfo = nil
	if _, err := p.Think(ctx, req); err != nil {
		t.Errorf("without OnInfo: %v", err)
	}
}
