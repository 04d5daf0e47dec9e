package engine

import (
	"fmt"
	"strings"
)

// MoveError reports a move text that cannot be played in a position.
type MoveError struct {
	Move string
	FEN  string
	Msg  string
}

func (e *MoveError) Error() string {
	return fmt.Sprintf("move %q in %q: %s", e.Move, e.FEN, e.Msg)
}

var promoLetters = [7]byte{0, 0, 'n', 'b', 'r', 'q', 0}

// UCIMove prints m in UCI long algebraic notation: "e2e4", "e7e8q"; castling
// as the king's two-square move ("e1g1") in standard chess and as king takes
// rook ("e1h1") in Chess960 mode, as the UCI protocol specifies.
func (p *Position) UCIMove(m Move) string {
	if m == NullMove {
		return "0000"
	}
	from, to := m.From(), m.To()
	if p.kingStepCastle(m) {
		to = castleKingTo[castleIndex(p.side, to > from)]
	}
	b := make([]byte, 0, 5)
	b = append(b, byte('a'+from.File()), byte('1'+from.Rank()), byte('a'+to.File()), byte('1'+to.Rank()))
	if m.IsPromotion() {
		b = append(b, promoLetters[m.Promotion()])
	}
	return string(b)
}

// kingStepCastle reports whether castling move m is written as the king's
// two-square move: in standard chess, with the king on the e-file and the
// rook in its corner. Anywhere else (a Chess960 placement, even with
// Chess960 off) the king's destination can be a square it also reaches by
// a plain move, so castling is written king takes rook.
func (p *Position) kingStepCastle(m Move) bool {
	return m.IsCastle() && !p.chess960 && m.From().File() == 4 && (m.To().File() == 0 || m.To().File() == 7)
}

// ParseUCIMove reads a UCI move and returns it if legal. Castling is
// accepted both as the king's two-square move (in standard chess) and as
// king takes rook (always unambiguous).
func (p *Position) ParseUCIMove(s string) (Move, error) {
	bad := func(msg string) (Move, error) { return NullMove, &MoveError{Move: s, FEN: p.FEN(), Msg: msg} }
	if len(s) != 4 && len(s) != 5 {
		return bad("not UCI notation (like e2e4 or e7e8q)")
	}
	from, ok1 := ParseSquare(s[0:2])
	to, ok2 := ParseSquare(s[2:4])
	if !ok1 || !ok2 {
		return bad("not UCI notation (like e2e4 or e7e8q)")
	}
	promo := NoPieceType
	if len(s) == 5 {
		switch s[4] {
		case 'q':
			promo = Queen
		case 'r':
			promo = Rook
		case 'b':
			promo = Bishop
		case 'n':
			promo = Knight
		default:
			return bad("promotion piece must be one of q, r, b, n")
		}
	}
	var ml MoveList
	p.generateFrom(&ml, from.Bit())
	for _, m := range ml.Slice() {
		if m.From() != from || m.Promotion() != promo {
			continue
		}
		if m.To() == to {
			return m, nil
		}
		if p.kingStepCastle(m) && castleKingTo[castleIndex(p.side, m.To() > from)] == to {
			return m, nil
		}
	}
	pc := p.board[from]
	switch {
	case pc == NoPiece:
		return bad(fmt.Sprintf("no piece on %s", from))
	case pc.Color() != p.side:
		return bad(fmt.Sprintf("the piece on %s is not the side to move's (%s to move)", from, p.side))
	case promo == NoPieceType && pc.Type() == Pawn && (to.Rank() == 7 || to.Rank() == 0):
		return bad("a pawn reaching the last rank must name its promotion piece")
	}
	return bad("illegal move")
}

var sanLetters = [7]byte{0, 0, 'N', 'B', 'R', 'Q', 'K'}

// SAN prints m (legal in p) in Standard Algebraic Notation, with + or #.
func (p *Position) SAN(m Move) string {
	var b []byte
	from, to := m.From(), m.To()
	pc := p.board[from]
	switch {
	case m.IsCastle():
		if to > from {
			b = append(b, "O-O"...)
		} else {
			b = append(b, "O-O-O"...)
		}
	case pc.Type() == Pawn:
		if from.File() != to.File() {
			b = append(b, byte('a'+from.File()), 'x')
		}
		b = append(b, to.String()...)
		if m.IsPromotion() {
			b = append(b, '=', sanLetters[m.Promotion()])
		}
	default:
		b = append(b, sanLetters[pc.Type()])
		// Disambiguate among same-type pieces that can reach 'to'.
		var ml MoveList
		p.GenerateMoves(&ml)
		sameFile, sameRank, others := false, false, false
		for _, o := range ml.Slice() {
			if o == m || o.To() != to || o.IsCastle() || p.board[o.From()] != pc {
				continue
			}
			others = true
			if o.From().File() == from.File() {
				sameFile = true
			}
			if o.From().Rank() == from.Rank() {
				sameRank = true
			}
		}
		if others {
			switch {
			case !sameFile:
				b = append(b, byte('a'+from.File()))
			case !sameRank:
				b = append(b, byte('1'+from.Rank()))
			default:
				b = append(b, from.String()...)
			}
		}
		if p.board[to] != NoPiece {
			b = append(b, 'x')
		}
		b = append(b, to.String()...)
	}
	c := *p
	c.MakeMove(m)
	if c.InCheck() {
		if !c.HasLegalMove() {
			b = append(b, '#')
		} else {
			b = append(b, '+')
		}
	}
	return string(b)
}

// ParseSAN reads a move in Standard Algebraic Notation (tolerating missing
// or extra check marks, "0-0", "e8Q" without '=', and annotations like !?).
func (p *Position) ParseSAN(s string) (Move, error) {
	bad := func(msg string) (Move, error) { return NullMove, &MoveError{Move: s, FEN: p.FEN(), Msg: msg} }
	t := strings.TrimRight(s, "+#!?")
	if t == "" {
		return bad("empty move")
	}
	var ml MoveList
	if t == "O-O" || t == "0-0" || t == "O-O-O" || t == "0-0-0" {
		kingside := len(t) == 3
		p.generateFrom(&ml, p.kingSq[p.side].Bit())
		for _, m := range ml.Slice() {
			if m.IsCastle() && (m.To() > m.From()) == kingside {
				return m, nil
			}
		}
		return bad("castling is not legal here")
	}
	promo := NoPieceType
	if i := strings.IndexByte(t, '='); i >= 0 {
		if i+2 != len(t) {
			return bad("malformed promotion")
		}
		promo = pieceTypeFromSAN(t[i+1])
		if promo == NoPieceType || promo == King || promo == Pawn {
			return bad("promotion piece must be Q, R, B or N")
		}
		t = t[:i]
	} else if n := len(t); n >= 3 && t[n-2] >= '1' && t[n-2] <= '8' && pieceTypeFromSAN(t[n-1]) != NoPieceType && t[0] >= 'a' && t[0] <= 'h' {
		promo = pieceTypeFromSAN(t[n-1])
		t = t[:n-1]
	}
	pt := Pawn
	if len(t) > 0 && t[0] >= 'A' && t[0] <= 'Z' {
		pt = pieceTypeFromSAN(t[0])
		if pt == NoPieceType || pt == Pawn {
			return bad("unknown piece letter")
		}
		t = t[1:]
	}
	// Drop one 'x' and one '-' ("Nxe5", "Ng1-f3") without allocating: a
	// replay of a game parses every move.
	var buf [16]byte
	if len(t) <= len(buf) && strings.ContainsAny(t, "x-") {
		n, x, dash := 0, false, false
		for i := 0; i < len(t); i++ {
			switch c := t[i]; {
			case c == 'x' && !x:
				x = true
			case c == '-' && !dash:
				dash = true
			default:
				buf[n] = c
				n++
			}
		}
		t = string(buf[:n])
	} else {
		t = strings.Replace(t, "x", "", 1)
		t = strings.Replace(t, "-", "", 1)
	}
	if len(t) < 2 {
		return bad("no destination square")
	}
	to, ok := ParseSquare(t[len(t)-2:])
	if !ok {
		return bad("bad destination square")
	}
	dis := t[:len(t)-2]
	fromFile, fromRank := -1, -1
	for i := 0; i < len(dis); i++ {
		switch c := dis[i]; {
		case c >= 'a' && c <= 'h':
			fromFile = int(c - 'a')
		case c >= '1' && c <= '8':
			fromRank = int(c - '1')
		default:
			return bad("unexpected character in disambiguation")
		}
	}
	// Only the moves of the named piece type can match.
	p.generateFrom(&ml, p.colors[p.side]&p.pieces[pt])
	found := NullMove
	for _, m := range ml.Slice() {
		if m.IsCastle() || m.To() != to || p.board[m.From()].Type() != pt || m.Promotion() != promo {
			continue
		}
		if fromFile >= 0 && m.From().File() != fromFile || fromRank >= 0 && m.From().Rank() != fromRank {
			continue
		}
		if found != NullMove {
			return bad("ambiguous: more than one piece can make this move")
		}
		found = m
	}
	if found == NullMove {
		return bad("illegal move")
	}
	return found, nil
}

func pieceTypeFromSAN(c byte) PieceType {
	switch c {
	case 'N':
		return Knight
	case 'B':
		return Bishop
	case 'R':
		return Rook
	case 'Q':
		return Queen
	case 'K':
		return King
	case 'P':
		return Pawn
	}
	return NoPieceType
}
