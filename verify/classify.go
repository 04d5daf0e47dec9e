package verify

import (
	"fmt"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// The classifiers look at a position and one move and say, in words an
// engine author recognises, why the move is illegal (the engine listed it)
// or why it is easy to miss (the engine did not). They work from the
// position alone, with the engine library's attack functions, so they also
// explain moves our own generator would never produce.

var pieceNames = [...]string{"", "pawn", "knight", "bishop", "rook", "queen", "king"}

// castleRooks returns the original rook square of each castling right held
// (WhiteOO, WhiteOOO, BlackOO, BlackOOO order), NoSquare for a right not
// held. The engine keeps them unexported; the Shredder-FEN castling field
// names their files, so we read them from there.
func castleRooks(p *engine.Position) [4]engine.Square {
	r := [4]engine.Square{engine.NoSquare, engine.NoSquare, engine.NoSquare, engine.NoSquare}
	c := *p
	c.SetChess960(true)
	f := strings.Fields(c.FEN())
	if len(f) < 3 || f[2] == "-" {
		return r
	}
	for _, ch := range f[2] {
		color, back, base := engine.White, 0, 'A'
		if ch >= 'a' && ch <= 'h' {
			color, back, base = engine.Black, 7, 'a'
		}
		file := int(ch - base)
		if file < 0 || file > 7 {
			continue
		}
		ksq := p.KingSquare(color)
		i := 2 * int(color)
		if file < ksq.File() {
			i++
		}
		r[i] = engine.MakeSquare(file, back)
	}
	return r
}

// castleTargets returns the king's and the rook's destination of right i.
func castleTargets(i int) (kingTo, rookTo engine.Square) {
	kt := [4]engine.Square{engine.G1, engine.C1, engine.G8, engine.C8}
	rt := [4]engine.Square{engine.F1, engine.D1, engine.F8, engine.D8}
	return kt[i], rt[i]
}

// between returns the squares strictly between a and b on one rank.
func betweenOnRank(a, b engine.Square) engine.Bitboard {
	var bb engine.Bitboard
	lo, hi := a, b
	if lo > hi {
		lo, hi = hi, lo
	}
	for s := lo + 1; s < hi; s++ {
		bb |= s.Bit()
	}
	return bb
}

// spanOnRank returns the squares from a to b inclusive on one rank.
func spanOnRank(a, b engine.Square) engine.Bitboard {
	return betweenOnRank(a, b) | a.Bit() | b.Bit()
}

// attackers returns the pieces of colour by attacking s with occupancy occ,
// ignoring pieces on the removed squares (captured, or lifted).
func attackers(p *engine.Position, s engine.Square, by engine.Color, occ, removed engine.Bitboard) engine.Bitboard {
	them := p.ColorPieces(by) &^ removed
	rq := (p.Pieces(by, engine.Rook) | p.Pieces(by, engine.Queen)) & them
	bq := (p.Pieces(by, engine.Bishop) | p.Pieces(by, engine.Queen)) & them
	return engine.PawnAttacks(by.Other(), s)&p.Pieces(by, engine.Pawn)&them |
		engine.KnightAttacks(s)&p.Pieces(by, engine.Knight)&them |
		engine.KingAttacks(s)&p.Pieces(by, engine.King)&them |
		engine.RookAttacks(s, occ)&rq | engine.BishopAttacks(s, occ)&bq
}

func squareList(b engine.Bitboard) string {
	var s []string
	for b != 0 {
		sq := b.First()
		b &= b - 1
		s = append(s, sq.String())
	}
	return strings.Join(s, ", ")
}

// parsedMove is a UCI move text taken apart without judging legality.
type parsedMove struct {
	from, to engine.Square
	promo    engine.PieceType
}

func parseMoveText(s string) (parsedMove, bool) {
	if len(s) != 4 && len(s) != 5 {
		return parsedMove{}, false
	}
	from, ok1 := engine.ParseSquare(s[0:2])
	to, ok2 := engine.ParseSquare(s[2:4])
	if !ok1 || !ok2 {
		return parsedMove{}, false
	}
	m := parsedMove{from: from, to: to}
	if len(s) == 5 {
		switch s[4] {
		case 'n':
			m.promo = engine.Knight
		case 'b':
			m.promo = engine.Bishop
		case 'r':
			m.promo = engine.Rook
		case 'q':
			m.promo = engine.Queen
		default:
			return parsedMove{}, false
		}
	}
	return m, true
}

// ClassifyIllegal says why the move text mv (which the engine listed) is
// not a legal move in p. It always returns a reason; the most specific one
// it can tell.
func ClassifyIllegal(p *engine.Position, mv string) string {
	m, ok := parseMoveText(mv)
	if !ok {
		return "not a move in UCI notation"
	}
	us, them := p.SideToMove(), p.SideToMove().Other()
	pc := p.PieceAt(m.from)
	switch {
	case pc == engine.NoPiece:
		return fmt.Sprintf("no piece on %s", m.from)
	case pc.Color() != us:
		return fmt.Sprintf("moves the opponent's %s on %s", pieceNames[pc.Type()], m.from)
	}
	if pc.Type() == engine.King {
		if r, ok := classifyCastle(p, m); ok {
			return r
		}
	}
	if m.promo != engine.NoPieceType && (pc.Type() != engine.Pawn || (m.to.Rank() != 0 && m.to.Rank() != 7)) {
		return "promotion suffix on a move that does not promote"
	}
	if pc.Type() == engine.Pawn && m.promo == engine.NoPieceType && (m.to.Rank() == 0 || m.to.Rank() == 7) {
		return "pawn reaches the last rank without promoting"
	}
	if m.promo == engine.King || m.promo == engine.Pawn {
		return "promotion to an impossible piece"
	}
	occ := p.Occupied()
	target := p.PieceAt(m.to)
	if target != engine.NoPiece && target.Color() == us {
		return fmt.Sprintf("%s captures its own %s on %s", pieceNames[pc.Type()], pieceNames[target.Type()], m.to)
	}
	if target != engine.NoPiece && target.Type() == engine.King {
		return "captures the king"
	}
	ksq := p.KingSquare(us)
	checkers := p.Checkers()

	// En passant: a pawn moving diagonally onto an empty square.
	if pc.Type() == engine.Pawn && target == engine.NoPiece && engine.PawnAttacks(us, m.from).Has(m.to) {
		if m.to != p.EnPassant() {
			return "pawn captures diagonally onto an empty square (no e.p. capture available there)"
		}
		capSq := m.to - 8
		if us == engine.Black {
			capSq = m.to + 8
		}
		after := occ&^m.from.Bit()&^capSq.Bit() | m.to.Bit()
		att := attackers(p, ksq, them, after, capSq.Bit())
		switch {
		case att == 0:
			return "e.p. capture (not illegal by any rule we know)"
		case checkers != 0 && att&checkers != 0:
			return fmt.Sprintf("e.p. capture leaves the king in check (from %s)", squareList(att&checkers))
		case (engine.RookAttacks(ksq, after)&att) != 0 && ksq.Rank() == m.from.Rank():
			return fmt.Sprintf("e.p. capture exposes the king along the rank (both pawns leave rank %d; %s attacks)", ksq.Rank()+1, squareList(att))
		case (engine.BishopAttacks(ksq, after) & att) != 0:
			return fmt.Sprintf("e.p. capture exposes the king along a diagonal (%s attacks)", squareList(att))
		case (engine.RookAttacks(ksq, after) & att) != 0:
			return fmt.Sprintf("e.p. capture exposes the king along the file (%s attacks)", squareList(att))
		}
		return "e.p. capture leaves the king in check"
	}

	if !reaches(p, pc, m.from, m.to) {
		return fmt.Sprintf("a %s on %s cannot move to %s", pieceNames[pc.Type()], m.from, m.to)
	}

	// A pseudo-legal move: what is wrong is the king's safety afterwards.
	after := occ&^m.from.Bit() | m.to.Bit()
	removed := m.to.Bit() // a captured piece no longer attacks
	if pc.Type() == engine.King {
		att := attackers(p, m.to, them, after, removed)
		if checkers != 0 && att != 0 && attackers(p, m.to, them, occ, removed) == 0 {
			return fmt.Sprintf("king steps back along the line of the checking piece (%s); it is still attacked on %s", squareList(att), m.to)
		}
		if att != 0 {
			return fmt.Sprintf("king moves into check (%s attacked by %s)", m.to, squareList(att))
		}
		return "king move (not illegal by any rule we know)"
	}
	att := attackers(p, ksq, them, after, removed)
	if att == 0 {
		return fmt.Sprintf("%s move (not illegal by any rule we know)", pieceNames[pc.Type()])
	}
	if checkers.More() {
		return "only the king may move in double check"
	}
	if checkers != 0 && att&checkers != 0 {
		return fmt.Sprintf("leaves the king in check (from %s); the move neither captures nor blocks the checker", squareList(att&checkers))
	}
	return fmt.Sprintf("pinned piece leaves its line (the %s on %s is pinned to the king by %s)", pieceNames[pc.Type()], m.from, squareList(att))
}

// reaches reports whether piece pc on from can move to to geometrically
// (pseudo-legally, ignoring castling and en passant).
func reaches(p *engine.Position, pc engine.Piece, from, to engine.Square) bool {
	occ := p.Occupied()
	switch pc.Type() {
	case engine.Knight:
		return engine.KnightAttacks(from).Has(to)
	case engine.Bishop:
		return engine.BishopAttacks(from, occ).Has(to)
	case engine.Rook:
		return engine.RookAttacks(from, occ).Has(to)
	case engine.Queen:
		return engine.QueenAttacks(from, occ).Has(to)
	case engine.King:
		return engine.KingAttacks(from).Has(to)
	case engine.Pawn:
		us := pc.Color()
		if engine.PawnAttacks(us, from).Has(to) {
			return p.PieceAt(to) != engine.NoPiece
		}
		step, start := 8, 1
		if us == engine.Black {
			step, start = -8, 6
		}
		one := engine.Square(int(from) + step)
		if to == one {
			return !occ.Has(one)
		}
		if from.Rank() == start && to == engine.Square(int(from)+2*step) {
			return !occ.Has(one) && !occ.Has(to)
		}
	}
	return false
}

// classifyCastle explains an illegal king move that looks like castling:
// king takes own rook, or (in standard notation) the king's two-square
// move along its back rank. ok is false when the move is no castling.
func classifyCastle(p *engine.Position, m parsedMove) (string, bool) {
	us, them := p.SideToMove(), p.SideToMove().Other()
	back := 0
	if us == engine.Black {
		back = 7
	}
	if m.from.Rank() != back || m.to.Rank() != back || m.promo != engine.NoPieceType {
		return "", false
	}
	target := p.PieceAt(m.to)
	kingTakesRook := target == engine.MakePiece(us, engine.Rook)
	twoSquare := !p.IsChess960() && m.from == engine.MakeSquare(4, back) && (m.to.File() == 6 || m.to.File() == 2)
	if !kingTakesRook && !twoSquare {
		// In Chess960, a two-square king move that is no legal move is most
		// likely castling written in standard notation.
		if p.IsChess960() && (m.to.File() == 6 || m.to.File() == 2) && !engine.KingAttacks(m.from).Has(m.to) {
			return "Chess960 castling written as the king's destination; UCI_Chess960 wants king takes rook (e.g. " + castleHint(p, m) + ")", true
		}
		return "", false
	}
	kingside := m.to.File() > m.from.File()
	i := 2 * int(us)
	if !kingside {
		i++
	}
	side := "kingside"
	if !kingside {
		side = "queenside"
	}
	rooks := castleRooks(p)
	rsq := rooks[i]
	if rsq == engine.NoSquare {
		return fmt.Sprintf("castling %s without the castling right", side), true
	}
	if kingTakesRook && m.to != rsq {
		return fmt.Sprintf("castling with the wrong rook (%s; the castling rook is on %s)", m.to, rsq), true
	}
	ksq := p.KingSquare(us)
	kingTo, rookTo := castleTargets(i)
	if p.InCheck() {
		return fmt.Sprintf("castling out of check (%s gives check)", squareList(p.Checkers())), true
	}
	occ := p.Occupied()
	lifted := occ &^ (ksq.Bit() | rsq.Bit())
	if b := betweenOnRank(ksq, rsq) & lifted; b != 0 {
		return fmt.Sprintf("castling %s with pieces between king and rook (%s)", side, squareList(b)), true
	}
	if lifted.Has(rookTo) {
		if p.IsChess960() {
			return fmt.Sprintf("Chess960 castling: rook's destination %s occupied", rookTo), true
		}
		return fmt.Sprintf("castling %s with the rook's destination %s occupied", side, rookTo), true
	}
	if lifted.Has(kingTo) {
		return fmt.Sprintf("castling %s with the king's destination %s occupied", side, kingTo), true
	}
	if b := (spanOnRank(ksq, kingTo) | spanOnRank(rsq, rookTo)) &^ (ksq.Bit() | rsq.Bit()) & lifted; b != 0 {
		return fmt.Sprintf("castling %s with pieces in the way (%s)", side, squareList(b)), true
	}
	path := spanOnRank(ksq, kingTo) &^ ksq.Bit()
	for b := path; b != 0; b &= b - 1 {
		s := b.First()
		if s == kingTo {
			continue
		}
		if att := attackers(p, s, them, lifted, 0); att != 0 {
			return fmt.Sprintf("castling through an attacked square (%s, attacked by %s)", s, squareList(att)), true
		}
	}
	if att := attackers(p, kingTo, them, lifted|kingTo.Bit()|rookTo.Bit(), 0); att != 0 {
		if ksq == kingTo {
			return fmt.Sprintf("Chess960 castling: the king stays on %s, which the rook no longer shields (attacked by %s)", kingTo, squareList(att)), true
		}
		return fmt.Sprintf("castling into check (%s attacked by %s)", kingTo, squareList(att)), true
	}
	return fmt.Sprintf("castling %s (not illegal by any rule we know)", side), true
}

func castleHint(p *engine.Position, m parsedMove) string {
	rooks := castleRooks(p)
	i := 2 * int(p.SideToMove())
	if m.to.File() == 2 {
		i++
	}
	if rooks[i] == engine.NoSquare {
		return "no castling right here"
	}
	return m.from.String() + rooks[i].String()
}

// ClassifyMissed says what kind of legal move m (which the engine did not
// list) is, naming the special rule it depends on.
func ClassifyMissed(p *engine.Position, m engine.Move) string {
	us, them := p.SideToMove(), p.SideToMove().Other()
	pc := p.PieceAt(m.From())
	ksq := p.KingSquare(us)
	checkers := p.Checkers()
	switch {
	case m.IsCastle():
		kingside := m.To() > m.From()
		i := 2 * int(us)
		side := "kingside"
		if !kingside {
			i++
			side = "queenside"
		}
		kingTo, rookTo := castleTargets(i)
		if p.IsChess960() {
			switch {
			case m.From() == kingTo:
				return fmt.Sprintf("missing Chess960 castling %s where the king does not move (only the rook moves, %s to %s)", side, m.To(), rookTo)
			case m.To() == rookTo:
				return fmt.Sprintf("missing Chess960 castling %s where the rook does not move (only the king moves, %s to %s)", side, m.From(), kingTo)
			case m.From() == rookTo:
				return fmt.Sprintf("missing Chess960 castling %s: the rook's destination %s is the king's own square, which is not a block", side, rookTo)
			case m.To() == kingTo:
				return fmt.Sprintf("missing Chess960 castling %s: the king's destination %s is the castling rook's own square, which is not a block", side, kingTo)
			}
			return fmt.Sprintf("missing Chess960 castling %s", side)
		}
		return fmt.Sprintf("missing castling %s", side)
	case m.IsEnPassant():
		if checkers != 0 {
			return "missing e.p. capture that resolves the check"
		}
		return "missing e.p. capture"
	case m.IsPromotion():
		if m.Promotion() != engine.Queen {
			return fmt.Sprintf("missing under-promotion to %s", pieceNames[m.Promotion()])
		}
		return "missing promotion to queen"
	}
	if pc.Type() == engine.King {
		if checkers != 0 {
			return "missing king move out of check"
		}
		return "missing king move"
	}
	if checkers != 0 {
		if checkers.Has(m.To()) {
			return "missing capture of the checking piece"
		}
		return "missing interposition against the check"
	}
	occ := p.Occupied()
	if pinners := attackers(p, ksq, them, occ&^m.From().Bit(), 0); pinners != 0 {
		return fmt.Sprintf("missing move of a pinned %s along its pin line (pinned by %s)", pieceNames[pc.Type()], squareList(pinners))
	}
	if pc.Type() == engine.Pawn && (int(m.To())-int(m.From()) == 16 || int(m.From())-int(m.To()) == 16) {
		return "missing double pawn push"
	}
	if p.IsCapture(m) {
		return fmt.Sprintf("missing %s capture", pieceNames[pc.Type()])
	}
	return fmt.Sprintf("missing %s move", pieceNames[pc.Type()])
}
