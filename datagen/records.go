package datagen

import (
	"crypto/sha256"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// Record is one kept position: what a trainer reads.
type Record struct {
	FEN    string // the position before the engine's move, full FEN
	Score  int    // the engine's score, White-relative centipawns (mates as MateScore says)
	Result Result // the game's final result
	Ply    int    // 0-based from the game's start position
}

// Records are the positions of g that f keeps, in game order: the
// position before each engine move (never a random ply), its score and
// the game's result. They are recomputed from the moves, so a record set
// never depends on a worker's word. g must be valid (from PlayGames or
// DecodeShard); a move that does not replay ends the records there.
func Records(g Game, f Filters) []Record {
	var out []Record
	walk(g, f, func(pos *engine.Position, ply int, mv *Move) {
		out = append(out, Record{FEN: pos.FEN(), Score: mv.Score, Result: g.Result, Ply: ply})
	})
	return out
}

// Count is len(Records(g, f)) without building the FENs.
func Count(g Game, f Filters) int {
	n := 0
	walk(g, f, func(*engine.Position, int, *Move) { n++ })
	return n
}

// walk calls keep for every position of g that f keeps.
func walk(g Game, f Filters, keep func(pos *engine.Position, ply int, mv *Move)) {
	pos, err := engine.ParseFEN(g.StartFEN)
	if err != nil {
		return
	}
	for i := range g.Moves {
		mv := &g.Moves[i]
		m, err := pos.ParseUCIMove(mv.UCI)
		if err != nil {
			return
		}
		if !mv.Random && i >= f.MinPly &&
			!(f.SkipInCheck && pos.InCheck()) &&
			!(f.SkipTactical && (pos.IsCapture(m) || m.IsPromotion())) &&
			!(f.SkipMates && (mv.Score > MateBound || mv.Score < -MateBound)) {
			keep(&pos, i, mv)
		}
		pos.MakeMove(m)
	}
}

// PositionKey identifies a record's position for duplicate counting: a
// hash of the FEN's first four fields (placement, side, castling, en
// passant), so that the same position reached at other move numbers is
// the same key. 128 bits: a collision among billions of positions is
// not a concern.
func PositionKey(fen string) [16]byte {
	f := strings.Fields(fen)
	if len(f) > 4 {
		f = f[:4]
	}
	h := sha256.Sum256([]byte(strings.Join(f, " ")))
	var k [16]byte
	copy(k[:], h[:16])
	return k
}
