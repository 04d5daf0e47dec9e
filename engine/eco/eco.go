// Package eco names chess openings: the ECO code and opening name of a
// position, from the Lichess chess-openings table
// (https://github.com/lichess-org/chess-openings, CC0 1.0: public
// domain), as fastchess 1.8.2 (f618e345) ships it in
// app/src/game/pgn/openings_data.cpp. openings.tsv holds that table's
// 3536 rows, one a line: the position as a FEN without its move counters
// (an en passant square only when a pawn can take there), the ECO code
// and the name, separated by tabs.
//
// The table is fastchess's, row for row, so that a PGN written in
// fastchess's format carries the ECO and Opening tags fastchess writes.
package eco

import (
	_ "embed"
	"strings"
	"sync"
)

//go:embed openings.tsv
var table string

// Opening is an ECO code ("C65") and an opening name ("Ruy Lopez:
// Berlin Defense").
type Opening struct {
	ECO, Name string
}

var (
	once  sync.Once
	byFEN map[string]Opening
)

func load() {
	byFEN = make(map[string]Opening, 3600)
	for line := range strings.SplitSeq(table, "\n") {
		fen, rest, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		code, name, _ := strings.Cut(rest, "\t")
		byFEN[fen] = Opening{ECO: code, Name: name}
	}
}

// Lookup is the opening of a position given as a FEN without its move
// counters (engine.Position.IdentityFEN), if the table names it.
func Lookup(fen string) (Opening, bool) {
	once.Do(load)
	o, ok := byFEN[fen]
	return o, ok
}
