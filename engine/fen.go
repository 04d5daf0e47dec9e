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
	bad := func(field, format string, args ...any) (Position, error) {
		return Position{}, &FENError{FEN: fen, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if len(fields) < 4 {
		return bad("position", "need at least 4 fields (placement, side, castling, en passant), got %d", len(fields))
	}
	if len(fields) > 6 {
		return bad("position", "too many fields: %d (at most 6)", len(fields))
	}

	// 1. Piece placement.
	ranks := strings.Split(fields[0], "/")
	if len(ranks) != 8 {
		return bad("piece placement", "need 8 ranks separated by '/', got %d", len(ranks))
	}
	for i, row := range ranks {
		rank := 7 - i
		file := 0
		prevDigit := false
		for j := 0; j < len(row); j++ {
			c := row[j]
			if c >= '1' && c <= '8' {
				if prevDigit {
					return bad("piece placement", "rank %d has two digits in a row", rank+1)
				}
				prevDigit = true
				file += int(c - '0')
				continue
			}
			prevDigit = false
			pc, ok := pieceFromLetter(c)
			if !ok {
				return bad("piece placement", "unknown piece letter %q on rank %d", c, rank+1)
			}
			if file >= 8 {
				return bad("piece placement", "rank %d has more than 8 squares", rank+1)
			}
			if pc.Type() == Pawn && (rank == 0 || rank == 7) {
				return bad("piece placement", "pawn on rank %d", rank+1)
			}
			p.putPiece(pc, MakeSquare(file, rank))
			file++
		}
		if file != 8 {
			return bad("piece placement", "rank %d has %d squares, not 8", rank+1, file)
		}
	}
	for c := White; c <= Black; c++ {
		kings := p.Pieces(c, King)
		if kings.Count() != 1 {
			return bad("piece placement", "%s has %d kings, need exactly 1", c, kings.Count())
		}
		p.kingSq[c] = kings.First()
		if n := p.Pieces(c, Pawn).Count(); n > 8 {
			return bad("piece placement", "%s has %d pawns (at most 8)", c, n)
		}
		if n := p.colors[c].Count(); n > 16 {
			return bad("piece placement", "%s has %d pieces (at most 16)", c, n)
		}
	}
	if kingAttacks[p.kingSq[White]].Has(p.kingSq[Black]) {
		return bad("piece placement", "the kings stand next to each other")
	}

	// 2. Side to move.
	switch fields[1] {
	case "w":
		p.side = White
	case "b":
		p.side = Black
	default:
		return bad("side to move", "%q is not 'w' or 'b'", fields[1])
	}

	// 3. Castling.
	for i := range p.castleRook {
		p.castleRook[i] = NoSquare
	}
	chess960 := false
	if fields[2] != "-" {
		for j := 0; j < len(fields[2]); j++ {
			c := fields[2][j]
			color := White
			lc := c
			if c >= 'a' && c <= 'z' {
				color = Black
			} else {
				lc = c + ('a' - 'A')
			}
			backRank := 0
			if color == Black {
				backRank = 7
			}
			ksq := p.kingSq[color]
			if ksq.Rank() != backRank {
				return bad("castling", "%q: the %s king is not on its first rank", c, color)
			}
			rooks := p.Pieces(color, Rook) & rankMask(MakeSquare(0, backRank))
			var rsq Square = NoSquare
			switch {
			case lc == 'k':
				// X-FEN: the outermost rook on the king's h-side.
				for f := 7; f > ksq.File(); f-- {
					if rooks.Has(MakeSquare(f, backRank)) {
						rsq = MakeSquare(f, backRank)
						break
					}
				}
			case lc == 'q':
				for f := 0; f < ksq.File(); f++ {
					if rooks.Has(MakeSquare(f, backRank)) {
						rsq = MakeSquare(f, backRank)
						break
					}
				}
			case lc >= 'a' && lc <= 'h':
				chess960 = true
				s := MakeSquare(int(lc-'a'), backRank)
				if !rooks.Has(s) {
					return bad("castling", "%q: no %s rook on %s", c, color, s)
				}
				if s.File() == ksq.File() {
					return bad("castling", "%q: the rook file is the king's file", c)
				}
				rsq = s
			default:
				return bad("castling", "unknown castling letter %q", c)
			}
			if rsq == NoSquare {
				return bad("castling", "%q: no %s rook on the %s side of the king", c, color, map[bool]string{true: "h", false: "a"}[lc == 'k'])
			}
			i := castleIndex(color, rsq > ksq)
			if p.castling&(1<<i) != 0 {
				return bad("castling", "%q: right given twice", c)
			}
			p.castling |= 1 << i
			p.castleRook[i] = rsq
			p.castleSquares |= rsq.Bit() | ksq.Bit()
			if ksq.File() != 4 || (rsq.File() != 0 && rsq.File() != 7) {
				chess960 = true
			}
		}
		// Both rights of one side must share the king (they do: one king) and
		// rooks on opposite sides (guaranteed by castleIndex).
	}
	p.chess960 = chess960

	// 4. En passant.
	p.ep = NoSquare
	if fields[3] != "-" {
		s, ok := ParseSquare(fields[3])
		if !ok {
			return bad("en passant", "%q is not a square or '-'", fields[3])
		}
		wantRank, up := 5, 8
		if p.side == Black {
			wantRank, up = 2, -8
		}
		if s.Rank() != wantRank {
			return bad("en passant", "%s is not on rank %d", s, wantRank+1)
		}
		pawnSq := Square(int(s) - up)
		origin := Square(int(s) + up)
		if p.board[pawnSq] != MakePiece(p.side^1, Pawn) {
			return bad("en passant", "no %s pawn on %s that could have just moved two squares", p.side^1, pawnSq)
		}
		if p.board[s] != NoPiece || p.board[origin] != NoPiece {
			return bad("en passant", "%s and %s must be empty after a double pawn push", s, origin)
		}
		// Keep the square only when a pawn can capture there, as Polyglot
		// and Stockfish do, so equal positions get equal keys and FENs.
		if pawnAttacks[p.side^1][s]&p.Pieces(p.side, Pawn) != 0 {
			p.ep = s
		}
	}

	// 5, 6. Counters.
	p.halfmove, p.fullmove = 0, 1
	if len(fields) >= 5 {
		n, err := strconv.Atoi(fields[4])
		if err != nil || n < 0 || n > 1000 {
			return bad("halfmove clock", "%q is not a number from 0 to 1000", fields[4])
		}
		p.halfmove = uint16(n)
	}
	if len(fields) >= 6 {
		n, err := strconv.Atoi(fields[5])
		if err != nil || n < 1 || n > 10000 {
			return bad("fullmove number", "%q is not a number from 1 to 10000", fields[5])
		}
		p.fullmove = uint16(n)
	}

	// Legality of the whole position.
	if p.attackedBy(p.kingSq[p.side^1], p.side, p.Occupied()) {
		return bad("position", "the side not to move (%s) is in check", p.side^1)
	}
	if n := p.Checkers().Count(); n > 2 {
		return bad("position", "the side to move is in check by %d pieces (at most 2 is possible)", n)
	}
	p.key = p.computeKey()
	return p, nil
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
