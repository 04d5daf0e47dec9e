package datagen

import (
	"testing"

	"github.com/arbiter-chess/arbiter/testing/tbtest"
)

// TestRescoreRecords: a record's result changes only where the tables
// answer for its position with the 50-move counter counted. The cursed
// win is match.TestTablebaseVerdict's (Fathom: 1/2-1/2).
func TestRescoreRecords(t *testing.T) {
	tb := Tablebase{Tables: tbtest.Open(t), Pieces: 5}
	const kqk = "8/8/8/8/8/3k4/8/3K2Q1 w - - 0 1"
	recs := []Record{
		{FEN: kqk, Result: Draw},                                     // won: rescored 1-0
		{FEN: kqk, Result: WhiteWins},                                // already right
		{FEN: "8/8/8/8/8/3k4/8/3K2Q1 b - - 0 1", Result: BlackWins},  // black to move, lost: 1-0
		{FEN: "8/8/8/8/8/3k4/8/3K2Q1 w - - 97 80", Result: Draw},     // a win too far for the counter: unchanged
		{FEN: "8/8/8/8/8/3k4/8/3K2Q1 w - - 10 30", Result: Draw},     // a win well within the counter: 1-0
		{FEN: "8/8/8/8/8/3k4/8/2K4N w - - 5 40", Result: WhiteWins},  // KNvK, a draw at any counter: 1/2
		{FEN: "8/2BBK3/8/3k4/8/8/8/7n w - - 0 1", Result: WhiteWins}, // KBBvKN cursed win: a draw
		{FEN: "r7/8/8/2K5/8/1P4k1/8/1R6 w - - 0 1", Result: Draw},    // KRPvKR: no table, unchanged
		{FEN: "r3k3/8/8/8/8/8/8/4K2R w K - 0 1", Result: WhiteWins},  // castling rights: never probed
		{FEN: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", Result: Draw},
	}
	want := []Result{WhiteWins, WhiteWins, WhiteWins, Draw, WhiteWins, Draw, Draw, Draw, WhiteWins, Draw}
	if n := RescoreRecords(recs, tb); n != 5 {
		t.Errorf("%d records rescored, want 5", n)
	}
	for i, r := range recs {
		if r.Result != want[i] {
			t.Errorf("record %d (%s): %v, want %v", i, r.FEN, r.Result, want[i])
		}
	}
	if n := RescoreRecords([]Record{{FEN: kqk, Result: Draw}}, Tablebase{}); n != 0 {
		t.Errorf("without tables, %d records rescored", n)
	}
	// --tb-pieces 3: a 4-piece position is left alone.
	four := []Record{{FEN: "8/8/8/8/8/3k4/8/3KR1Q1 w - - 0 1", Result: Draw}}
	if n := RescoreRecords(four, Tablebase{Tables: tb.Tables, Pieces: 3}); n != 0 || four[0].Result != Draw {
		t.Errorf("a 4-piece position rescored under --tb-pieces 3: %v", four[0].Result)
	}
}
