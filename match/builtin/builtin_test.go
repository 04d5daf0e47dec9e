package builtin_test

import (
	"context"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// TestOnInfo: the embedded engine reports each completed iteration's pv
// through ThinkRequest.OnInfo; the last begins with the move it plays.
func TestOnInfo(t *testing.T) {
	p, err := builtin.New("b", map[string]string{"Threads": "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.NewGame(ctx, false)
	req := &match.ThinkRequest{StartFEN: "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
		Limits: match.Limits{Depth: 6}, Timeout: time.Minute, White: true}
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
	if len(moves) != 6 || depths[5] != 6 {
		t.Fatalf("reports at depths %v (moves %v), want one per depth 1..6", depths, moves)
	}
	if moves[5] != rep.Move {
		t.Errorf("last pv move %q, bestmove %q", moves[5], rep.Move)
	}
}
