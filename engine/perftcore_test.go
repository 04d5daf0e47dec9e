package engine

import (
	"fmt"
	"sort"
	"testing"
)

// asMove converts a perft core move of p to the engine's Move.
func asMove(p *Position, m perftMove) Move {
	switch m.kind() {
	case pmPromotion:
		return newPromotion(m.from(), m.to(), m.pieceType())
	case pmEnPassant:
		return newMove(m.from(), m.to()) | kindEnPassant
	case pmCastle:
		return newMove(m.from(), p.castleRook[m.to()]) | kindCastle
	}
	return newMove(m.from(), m.to())
}

// coreCount, corePerft2 and coreGen call the core's functions for the side
// to move.
func coreCount(c *perftCore, b *perftBoard) uint64 {
	if b.side == White {
		return c.countWhite(b)
	}
	return c.countBlack(b)
}

func corePerft2(c *perftCore, b *perftBoard) uint64 {
	if b.side == White {
		return c.perft2White(b)
	}
	return c.perft2Black(b)
}

func coreGen(c *perftCore, b *perftBoard, ml *perftMoveList) {
	if b.side == White {
		c.genWhite(b, ml)
	} else {
		c.genBlack(b, ml)
	}
}

// corePositions returns the positions of random walks (standard and
// Chess960) and of the perft suites, with the children of the suites'.
func corePositions(t *testing.T) []Position {
	positions := walkPositions(6, 60)
	for _, file := range []string{"perftsuite.epd", "blunder_perft_suite.epd", "ethereal_fischer960.epd"} {
		for _, fen := range suiteFENs(t, file) {
			p := mustFEN(t, fen)
			positions = append(positions, p)
			for _, m := range p.LegalMoves() {
				c := p
				c.MakeMove(m)
				positions = append(positions, c)
			}
		}
	}
	return positions
}

// TestPerftCoreAgrees: the perft core (perft_gen.go, perftboard.go) and
// Position's generator agree on every position of corePositions: the
// number of legal moves, the moves themselves, the board after each move
// (pieces, side, castling rights, e.p. square) and perft 2.
func TestPerftCoreAgrees(t *testing.T) {
	positions := corePositions(t)
	var ml perftMoveList
	for i := range positions {
		p := &positions[i]
		c := newPerftCore(p, nil, 2)
		b := newPerftBoard(p)
		want := p.LegalMoves()
		if n := coreCount(c, &b); n != uint64(len(want)) {
			t.Fatalf("%s: core count %d, want %d", p.FEN(), n, len(want))
		}
		coreGen(c, &b, &ml)
		var got []string
		var perft2 uint64
		for _, m := range ml.moves[:ml.n] {
			mv := asMove(p, m)
			got = append(got, p.UCIMove(mv))
			if !p.IsLegal(mv) {
				t.Fatalf("%s: core move %s (%#x) is not legal", p.FEN(), p.UCIMove(mv), uint32(m))
			}
			child := *p
			child.MakeMove(mv)
			wantBoard := newPerftBoard(&child)
			wantBoard.rooks = b.rooks // the root's rooks, as the core keeps them
			if gotBoard := c.make(&b, m); gotBoard != wantBoard {
				t.Fatalf("%s: after %s the core's board is\n%+v\nwant\n%+v", p.FEN(), p.UCIMove(mv), gotBoard, wantBoard)
			}
			perft2 += uint64(child.LegalMoveCount())
		}
		var wantUCI []string
		for _, m := range want {
			wantUCI = append(wantUCI, p.UCIMove(m))
		}
		sort.Strings(got)
		sort.Strings(wantUCI)
		if fmt.Sprint(got) != fmt.Sprint(wantUCI) {
			t.Fatalf("%s: core moves\n%v\nwant\n%v", p.FEN(), got, wantUCI)
		}
		if n := corePerft2(c, &b); n != perft2 {
			t.Fatalf("%s: core perft 2 = %d, want %d", p.FEN(), n, perft2)
		}
	}
	t.Logf("%d positions", len(positions))
}
