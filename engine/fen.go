package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// FENError reports what is wrong with a FEN, naming the field.
type FENError struct {
	FEN   string
	Field string // "piece placement", "side to move", "castling", "en passant", "halfmove clock", "fullmove number", "position"
	Msg   string
}

func (e *FENError) Error() string {
	return fmt.Sprintf("invalid FEN %q: %s: %s", e.FEN, e.Field, e.Msg)
}

// ParseFEN reads a FEN (or the first four or more fields of an EPD line's
// position). Castling may be standard (KQkq), X-FEN (KQkq meaning the
// outermost rook, or rook file letters) or Shredder-FEN (file letters such as
// HAha). Chess960 mode is switched on when the castling field can only be
// Chess960 (file letters, or a king or rook off its standard square); force
// it with SetChess960. Missing move counters default to "0 1". Every rule a
// legal position must satisfy is checked; the error names the field.
func ParseFEN(fen string) (Position, error) {
	var p Position
	fields := strings.Fields(fen)
	err := func() *FENError {
		if len(fields) < 4 {
			return fieldErr("position", "need at least 4 fields (placement, side, castling, en passant), got %d", len(fields))
		}
		if len(fields) > 6 {
			return fieldErr("position", "too many fields: %d (at most 6)", len(fields))
		}
		for _, step := range []func() *FENError{
			func() *FENError { return p.parsePlacement(fields[0]) },
			func() *FENError { return p.parseSide(fields[1]) },
			func() *FENError { return p.parseCastling(fields[2]) },
			func() *FENError { return p.parseEnPassant(fields[3]) },
			func() *FENError { return p.parseCounters(fields[4:]) },
			p.checkLegal,
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		err.FEN = fen
		return Position{}, err
	}
	p.key = p.computeKey()
	return p, nil
}

// fieldErr is a FENError without its FEN, which ParseFEN fills in.
func fieldErr(field, format string, args ...any) *FENError {
	return &FENError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// parsePlacement reads the piece placement: 8 ranks of pieces and digits,
// one king a side, no pawn on the first or last rank, at most 8 pawns and
// 16 pieces a side, and kings apart.
func (p *Position) parsePlacement(field string) *FENError {
	ranks := strings.Split(field, "/")
	if len(ranks) != 8 {
		return fieldErr("piece placement", "need 8 ranks separated by '/', got %d", len(ranks))
	}
	for i, row := range ranks {
		if err := p.parseRank(7-i, row); err != nil {
			return err
		}
	}
	for c := White; c <= Black; c++ {
		kings := p.Pieces(c, King)
		if kings.Count() != 1 {
			return fieldErr("piece placement", "%s has %d kings, need exactly 1", c, kings.Count())
		}
		p.kingSq[c] = kings.First()
		if n := p.Pieces(c, Pawn).Count(); n > 8 {
			return fieldErr("piece placement", "%s has %d pawns (at most 8)", c, n)
		}
		if n := p.colors[c].Count(); n > 16 {
			return fieldErr("piece placement", "%s has %d pieces (at most 16)", c, n)
		}
	}
	if kingAttacks[p.kingSq[White]].Has(p.kingSq[Black]) {
		return fieldErr("piece placement", "the kings stand next to each other")
	}
	return nil
}

// parseRank puts one rank's pieces (row, from the a-file) on the board.
func (p *Position) parseRank(rank int, row string) *FENError {
	file := 0
	prevDigit := false
	for j := 0; j < len(row); j++ {
		c := row[j]
		if c >= '1' && c <= '8' {
			if prevDigit {
				return fieldErr("piece placement", "rank %d has two digits in a row", rank+1)
			}
			prevDigit = true
			file += int(c - '0')
			continue
		}
		prevDigit = false
		pc, ok := pieceFromLetter(c)
		if !ok {
			return fieldErr("piece placement", "unknown piece letter %q on rank %d", c, rank+1)
		}
		if file >= 8 {
			return fieldErr("piece placement", "rank %d has more than 8 squares", rank+1)
		}
		if pc.Type() == Pawn && (rank == 0 || rank == 7) {
			return fieldErr("piece placement", "pawn on rank %d", rank+1)
		}
		p.putPiece(pc, MakeSquare(file, rank))
		file++
	}
	if file != 8 {
		return fieldErr("piece placement", "rank %d has %d squares, not 8", rank+1, file)
	}
	return nil
}

func (p *Position) parseSide(field string) *FENError {
	switch field {
	case "w":
		p.side = White
	case "b":
		p.side = Black
	default:
		return fieldErr("side to move", "%q is not 'w' or 'b'", field)
	}
	return nil
}

// parseCastling reads standard (KQkq), X-FEN or Shredder-FEN rights, and
// switches Chess960 mode on when they can only be Chess960.
func (p *Position) parseCastling(field string) *FENError {
	for i := range p.castleRook {
		p.castleRook[i] = NoSquare
	}
	p.chess960 = false
	if field == "-" {
		return nil
	}
	for j := 0; j < len(field); j++ {
		c := field[j]
		color := White
		lc := c
		if c >= 'a' && c <= 'z' {
			color = Black
		} else {
			lc = c + ('a' - 'A')
		}
		ksq := p.kingSq[color]
		rsq, err := p.castlingRook(c, lc, color)
		if err != nil {
			return err
		}
		i := castleIndex(color, rsq > ksq)
		if p.castling&(1<<i) != 0 {
			return fieldErr("castling", "%q: right given twice", c)
		}
		p.castling |= 1 << i
		p.castleRook[i] = rsq
		p.castleSquares |= rsq.Bit() | ksq.Bit()
		if lc != 'k' && lc != 'q' || ksq.File() != 4 || (rsq.File() != 0 && rsq.File() != 7) {
			p.chess960 = true
		}
	}
	// Both rights of one side share the king (there is one) and have rooks
	// on opposite sides (castleIndex guarantees it).
	return nil
}

// castlingRook finds the rook the castling letter c (lower-cased lc) of
// color names: K/Q the outermost rook on that side of the king (X-FEN),
// a file letter the rook on that file (Shredder-FEN).
func (p *Position) castlingRook(c, lc byte, color Color) (Square, *FENError) {
	backRank := 0
	if color == Black {
		backRank = 7
	}
	ksq := p.kingSq[color]
	if ksq.Rank() != backRank {
		return NoSquare, fieldErr("castling", "%q: the %s king is not on its first rank", c, color)
	}
	rooks := p.Pieces(color, Rook) & rankMask(MakeSquare(0, backRank))
	rsq := NoSquare
	switch {
	case lc == 'k':
		for f := 7; f > ksq.File() && rsq == NoSquare; f-- {
			if rooks.Has(MakeSquare(f, backRank)) {
				rsq = MakeSquare(f, backRank)
			}
		}
	case lc == 'q':
		for f := 0; f < ksq.File() && rsq == NoSquare; f++ {
			if rooks.Has(MakeSquare(f, backRank)) {
				rsq = MakeSquare(f, backRank)
			}
		}
	case lc >= 'a' && lc <= 'h':
		s := MakeSquare(int(lc-'a'), backRank)
		if !rooks.Has(s) {
			return NoSquare, fieldErr("castling", "%q: no %s rook on %s", c, color, s)
		}
		if s.File() == ksq.File() {
			return NoSquare, fieldErr("castling", "%q: the rook file is the king's file", c)
		}
		rsq = s
	default:
		return NoSquare, fieldErr("castling", "unknown castling letter %q", c)
	}
	if rsq == NoSquare {
		return NoSquare, fieldErr("castling", "%q: no %s rook on the %s side of the king", c, color, map[bool]string{true: "h", false: "a"}[lc == 'k'])
	}
	return rsq, nil
}

// parseEnPassant keeps the square only when a pawn can capture there, as
// Polyglot and Stockfish do, so equal positions get equal keys and FENs.
func (p *Position) parseEnPassant(field string) *FENError {
	p.ep = NoSquare
	if field == "-" {
		return nil
	}
	s, ok := ParseSquare(field)
	if !ok {
		return fieldErr("en passant", "%q is not a square or '-'", field)
	}
	wantRank, up := 5, 8
	if p.side == Black {
		wantRank, up = 2, -8
	}
	if s.Rank() != wantRank {
		return fieldErr("en passant", "%s is not on rank %d", s, wantRank+1)
	}
	pawnSq := Square(int(s) - up)
	origin := Square(int(s) + up)
	if p.board[pawnSq] != MakePiece(p.side^1, Pawn) {
		return fieldErr("en passant", "no %s pawn on %s that could have just moved two squares", p.side^1, pawnSq)
	}
	if p.board[s] != NoPiece || p.board[origin] != NoPiece {
		return fieldErr("en passant", "%s and %s must be empty after a double pawn push", s, origin)
	}
	if pawnAttacks[p.side^1][s]&p.Pieces(p.side, Pawn) != 0 {
		p.ep = s
	}
	return nil
}

// parseCounters reads the halfmove clock and fullmove number, when given
// (fields holds what follows the en passant field); missing ones are 0 1.
func (p *Position) parseCounters(fields []string) *FENError {
	p.halfmove, p.fullmove = 0, 1
	if len(fields) >= 1 {
		n, err := strconv.Atoi(fields[0])
		if err != nil || n < 0 || n > 1000 {
			return fieldErr("halfmove clock", "%q is not a number from 0 to 1000", fields[0])
		}
		p.halfmove = uint16(n)
	}
	if len(fields) >= 2 {
		n, err := strconv.Atoi(fields[1])
		if err != nil || n < 1 || n > 10000 {
			return fieldErr("fullmove number", "%q is not a number from 1 to 10000", fields[1])
		}
		p.fullmove = uint16(n)
	}
	return nil
}

// checkLegal checks the whole position: the side not to move is not in
// check, and the side to move is checked by at most two pieces.
func (p *Position) checkLegal() *FENError {
	if p.attackedBy(p.kingSq[p.side^1], p.side, p.Occupied()) {
		return fieldErr("position", "the side not to move (%s) is in check", p.side^1)
	}
	if n := p.Checkers().Count(); n > 2 {
		return fieldErr("position", "the side to move is in check by %d pieces (at most 2 is possible)", n)
	}
	return nil
}

// FEN returns the position as FEN. In Chess960 mode castling rights are
// written as Shredder-FEN file letters (what Stockfish prints and accepts).
func (p *Position) FEN() string {
	var b strings.Builder
	b.Grow(90)
	for rank := 7; rank >= 0; rank-- {
		empty := 0
		for file := 0; file < 8; file++ {
			pc := p.board[MakeSquare(file, rank)]
			if pc == NoPiece {
				empty++
				continue
			}
			if empty > 0 {
				b.WriteByte(byte('0' + empty))
				empty = 0
			}
			b.WriteByte(pc.Letter())
		}
		if empty > 0 {
			b.WriteByte(byte('0' + empty))
		}
		if rank > 0 {
			b.WriteByte('/')
		}
	}
	if p.side == White {
		b.WriteString(" w ")
	} else {
		b.WriteString(" b ")
	}
	b.WriteString(p.castlingString())
	b.WriteByte(' ')
	b.WriteString(p.ep.String())
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(int(p.halfmove)))
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(int(p.fullmove)))
	return b.String()
}

func (p *Position) castlingString() string {
	if p.castling == 0 {
		return "-"
	}
	var out []byte
	std := "KQkq"
	for i := 0; i < 4; i++ {
		if p.castling&(1<<i) == 0 {
			continue
		}
		if !p.chess960 {
			out = append(out, std[i])
			continue
		}
		letter := byte('A' + p.castleRook[i].File())
		if i >= 2 {
			letter += 'a' - 'A'
		}
		out = append(out, letter)
	}
	return string(out)
}

// IdentityFEN returns the FEN without move counters: two positions with the
// same IdentityFEN have the same legal moves and subtrees, which is what
// perft splitting merges on.
func (p *Position) IdentityFEN() string {
	f := p.FEN()
	// Drop the last two fields.
	for i := 0; i < 2; i++ {
		f = f[:strings.LastIndexByte(f, ' ')]
	}
	return f
}
