package match_test

import (
	"context"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// TestOnInfo: a real Stockfish and the embedded engine report every pv
// through ThinkRequest.OnInfo as they search: one report per iteration at
// least, depths rising, the last pv beginning with the move played. The
// control: without OnInfo the same search is answered as before.
func TestOnInfo(t *testing.T) {
	players := map[string]func() (match.Player, error){
		"builtin": func() (match.Player, error) { return builtin.New("b", map[string]string{"Threads": "1"}) },
		"stockfish": func() (match.Player, error) {
			need(t, stockfish, "stockfish")
			return match.NewUCIPlayer(sf("sf", 20))
		},
	}
	for name, start := range players {
		t.Run(name, func(t *testing.T) {
			p, err := start()
			if err != nil {
				t.Fatal(err)
			}
			defer p.Quit()
			ctx := context.Background()
			if err := p.NewGame(ctx, false); err != nil {
				t.Fatal(err)
			}
			// WAC.001.
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
			if len(moves) < 6 || depths[len(depths)-1] < 6 {
				t.Fatalf("reports at depths %v (moves %v), want one per depth 1..6 at least", depths, moves)
			}
			if last := moves[len(moves)-1]; last != rep.Move {
				t.Errorf("last pv move %q, bestmove %q", last, rep.Move)
			}
			for i := 1; i < len(depths); i++ {
				if depths[i] < depths[i-1] {
					t.Errorf("depths not rising: %v", depths)
				}
			}
			req.OnInfo = nil
			if rep, err := p.Think(ctx, req); err != nil || rep.Move == "" {
				t.Errorf("without OnInfo: %v %+v", err, rep)
			}
		})
	}
}
