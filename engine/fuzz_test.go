package engine

// Fuzz targets for the parsers that take user input. Run one with e.g.
//
//	go test -run='^$' -fuzz=FuzzParseFEN -fuzztime=20s ./engine/
//
// Without -fuzz, `go test` runs the seed corpora as ordinary tests.

import (
	"strings"
	"testing"
)

var fuzzSeedFENs = []string{
	StartFEN,
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
	"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
	"rnbqkb1r/ppppp1pp/7n/4Pp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
	"8/8/1k6/8/2pP4/8/5BK1/8 b - d3 0 1",
	"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
	"Qrk1r2b/4pp2/1p1pn2p/p3q1p1/6n1/BP2P2P/P1KP4/2RNN1RB b b - 5 16",
	"1r2k1rr/8/8/8/8/8/8/1R2K1RR w KQkq - 0 1",
	"n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
	"4k3/8/8/8/8/3n1n2/8/r3K3 w - - 0 1",
	"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq",
	"rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
	"P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
	"4k3/8/8/8/8/8/8/R3K3 w H - 0 1",
	"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e6 0 1",
	"8/8/8/8/8/8/8/K6k w - - 99999 1",
	"",
	"////////",
	"8/8/8/8/8/8/8/8 w - - 0 1",
}

// checkPosition exercises everything a parsed position offers; any
// inconsistency is a failure.
func checkPosition(t *testing.T, p *Position) {
	fen := p.FEN()
	q, err := ParseFEN(fen)
	if err != nil {
		t.Fatalf("FEN() of an accepted position does not parse: %q: %v", fen, err)
	}
	q.SetChess960(p.IsChess960())
	if q.FEN() != fen || q.Key() != p.Key() {
		t.Fatalf("round trip: %q -> %q (keys %016x %016x)", fen, q.FEN(), p.Key(), q.Key())
	}
	if p.computeKey() != p.Key() {
		t.Fatalf("%s: key %016x, recomputed %016x", fen, p.Key(), p.computeKey())
	}
	var ml MoveList
	p.GenerateMoves(&ml)
	if n := p.LegalMoveCount(); n != ml.N {
		t.Fatalf("%s: GenerateMoves %d, LegalMoveCount %d", fen, ml.N, n)
	}
	if (ml.N == 0) != (p.IsCheckmate() || p.IsStalemate()) {
		t.Fatalf("%s: %d moves, mate %v, stalemate %v", fen, ml.N, p.IsCheckmate(), p.IsStalemate())
	}
	var total uint64
	for _, m := range ml.Slice() {
		u := p.UCIMove(m)
		if back, err := p.ParseUCIMove(u); err != nil || back != m {
			t.Fatalf("%s: UCI %q does not parse back: %v", fen, u, err)
		}
		s := p.SAN(m)
		if back, err := p.ParseSAN(s); err != nil || back != m {
			t.Fatalf("%s: SAN %q does not parse back: %v", fen, s, err)
		}
		c := *p
		c.MakeMove(m)
		if c.computeKey() != c.Key() {
			t.Fatalf("%s after %s: key %016x, recomputed %016x", fen, u, c.Key(), c.computeKey())
		}
		if c.AttackedBy(c.KingSquare(c.SideToMove().Other()), c.SideToMove()) {
			t.Fatalf("%s: %s leaves the king in check", fen, u)
		}
		total += uint64(c.LegalMoveCount())
	}
	if got := Perft(p, 2); got != total {
		t.Fatalf("%s: Perft(2) = %d, sum over children %d", fen, got, total)
	}
}

func FuzzParseFEN(f *testing.F) {
	for _, s := range fuzzSeedFENs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, fen string) {
		p, err := ParseFEN(fen)
		if err != nil {
			if _, ok := err.(*FENError); !ok {
				t.Fatalf("error %T, want *FENError", err)
			}
			return
		}
		checkPosition(t, &p)
		p.SetChess960(!p.IsChess960())
		checkPosition(t, &p)
	})
}

func FuzzParseUCIMove(f *testing.F) {
	for _, fen := range fuzzSeedFENs[:11] {
		for _, mv := range []string{"e2e4", "e1g1", "e1h1", "e1c1", "a7a8q", "b7a8n", "d7c8r", "e5f6", "g1f3", "0000", "", "e7e8k", "h1h1"} {
			f.Add(fen, mv)
		}
	}
	f.Fuzz(func(t *testing.T, fen, mv string) {
		p, err := ParseFEN(fen)
		if err != nil {
			return
		}
		for _, chess960 := range []bool{false, true} {
			p.SetChess960(chess960 || p.IsChess960())
			m, err := p.ParseUCIMove(mv)
			if err != nil {
				if _, ok := err.(*MoveError); !ok {
					t.Fatalf("error %T, want *MoveError", err)
				}
				continue
			}
			if !p.IsLegal(m) {
				t.Fatalf("%s: ParseUCIMove(%q) returned the illegal move %v", p.FEN(), mv, m)
			}
			if back, err := p.ParseUCIMove(p.UCIMove(m)); err != nil || back != m {
				t.Fatalf("%s: %q -> %q does not parse back", p.FEN(), mv, p.UCIMove(m))
			}
			if !strings.HasPrefix(mv, p.UCIMove(m)[:2]) {
				t.Fatalf("%s: %q parsed as a move from another square: %s", p.FEN(), mv, p.UCIMove(m))
			}
		}
	})
}

func FuzzParseSAN(f *testing.F) {
	for _, fen := range fuzzSeedFENs[:11] {
		for _, mv := range []string{"e4", "Nf3", "O-O", "0-0-0", "Qxe7+", "a8=Q", "bxa8=N#", "R1a4", "Qa1b2", "exf6", "Kd2!?", "", "=", "x", "Nxx"} {
			f.Add(fen, mv)
		}
	}
	f.Fuzz(func(t *testing.T, fen, san string) {
		p, err := ParseFEN(fen)
		if err != nil {
			return
		}
		m, err := p.ParseSAN(san)
		if err != nil {
			if _, ok := err.(*MoveError); !ok {
				t.Fatalf("error %T, want *MoveError", err)
			}
			return
		}
		if !p.IsLegal(m) {
			t.Fatalf("%s: ParseSAN(%q) returned the illegal move %v", p.FEN(), san, m)
		}
		if back, err := p.ParseSAN(p.SAN(m)); err != nil || back != m {
			t.Fatalf("%s: %q -> %q does not parse back", p.FEN(), san, p.SAN(m))
		}
	})
}
