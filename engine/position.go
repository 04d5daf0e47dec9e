package engine

// Position invariants (kept by ParseFEN and MakeMove, relied on everywhere):
//   - pieces[t] & colors[c] and board[] always describe the same placement;
//     pieces[NoPieceType] is unused;
//   - kingSq[c] is the square of c's only king;
//   - ep is set only when a pawn of the side to move attacks it (so Key and
//     FEN agree with Polyglot and Stockfish), otherwise NoSquare;
//   - a castling right is set only while its king and rook stand on their
//     original squares (kingSq, castleRook);
//   - key is the Polyglot Zobrist key of exactly this position;
//   - the side not to move is not in check.
//
// A Position is a plain value without pointers: copying it (copy-make) keeps
// a parent, and the copy stays on the stack.
type Position struct {
	pieces [7]Bitboard
	colors [2]Bitboard
	board  [64]Piece
	key    uint64
	// castleRook[i] is the original square of the rook of castling right i
	// (any file in Chess960); meaningful only while the right is held.
	castleRook [4]Square
	// castleSquares holds the kings' and castling rooks' original squares:
	// only a move from or to one of them can change the castling rights.
	castleSquares Bitboard
	kingSq        [2]Square
	side          Color
	ep            Square
	castling      uint8
	chess960      bool
	halfmove      uint16
	fullmove      uint16
}

// Castling rights, one bit each, in Polyglot key order.
const (
	WhiteOO  = 1 << 0 // white, towards the h-file
	WhiteOOO = 1 << 1 // white, towards the a-file
	BlackOO  = 1 << 2
	BlackOOO = 1 << 3
)

// StartFEN is the standard starting position.
const StartFEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

// StartPosition returns the standard starting position.
func StartPosition() Position {
	p, err := ParseFEN(StartFEN)
	if err != nil {
		panic("engine: start position does not parse: " + err.Error())
	}
	return p
}

// SideToMove returns the side to move.
func (p *Position) SideToMove() Color { return p.side }

// PieceAt returns the piece on s, or NoPiece.
func (p *Position) PieceAt(s Square) Piece { return p.board[s] }

// Pieces returns the squares holding pieces of colour c and type t.
func (p *Position) Pieces(c Color, t PieceType) Bitboard { return p.pieces[t] & p.colors[c] }

// Occupied returns all occupied squares.
func (p *Position) Occupied() Bitboard { return p.colors[White] | p.colors[Black] }

// ColorPieces returns all pieces of colour c.
func (p *Position) ColorPieces(c Color) Bitboard { return p.colors[c] }

// TypePieces returns all pieces of type t, both colours.
func (p *Position) TypePieces(t PieceType) Bitboard { return p.pieces[t] }

// KingSquare returns the square of c's king.
func (p *Position) KingSquare(c Color) Square { return p.kingSq[c] }

// Key returns the Polyglot Zobrist key.
func (p *Position) Key() uint64 { return p.key }

// EnPassant returns the en-passant target square, or NoSquare.
func (p *Position) EnPassant() Square { return p.ep }

// CastlingRights returns the rights as WhiteOO|WhiteOOO|BlackOO|BlackOOO bits.
func (p *Position) CastlingRights() uint8 { return p.castling }

// HalfmoveClock returns the number of plies since the last capture or pawn move.
func (p *Position) HalfmoveClock() int { return int(p.halfmove) }

// FullmoveNumber returns the move number (starts at 1, incremented after Black).
func (p *Position) FullmoveNumber() int { return int(p.fullmove) }

// IsChess960 reports whether moves and FEN use Chess960 conventions.
func (p *Position) IsChess960() bool { return p.chess960 }

// SetChess960 switches the notation mode: castling as king-takes-rook in UCI
// and Shredder-FEN castling letters. The position itself does not change.
func (p *Position) SetChess960(on bool) { p.chess960 = on }

// InCheck reports whether the side to move is in check.
func (p *Position) InCheck() bool {
	return p.attackersTo(p.kingSq[p.side], p.Occupied())&p.colors[p.side^1] != 0
}

// Checkers returns the pieces giving check to the side to move.
func (p *Position) Checkers() Bitboard {
	return p.attackersTo(p.kingSq[p.side], p.Occupied()) & p.colors[p.side^1]
}

// attackersTo returns the pieces of both colours that attack s.
func (p *Position) attackersTo(s Square, occ Bitboard) Bitboard {
	return pawnAttacks[White][s]&p.pieces[Pawn]&p.colors[Black] |
		pawnAttacks[Black][s]&p.pieces[Pawn]&p.colors[White] |
		knightAttacks[s]&p.pieces[Knight] |
		kingAttacks[s]&p.pieces[King] |
		BishopAttacks(s, occ)&(p.pieces[Bishop]|p.pieces[Queen]) |
		RookAttacks(s, occ)&(p.pieces[Rook]|p.pieces[Queen])
}

// AttackedBy reports whether colour by attacks s in the current position.
func (p *Position) AttackedBy(s Square, by Color) bool {
	return p.attackedBy(s, by, p.Occupied())
}

func (p *Position) attackedBy(s Square, by Color, occ Bitboard) bool {
	them := p.colors[by]
	if knightAttacks[s]&p.pieces[Knight]&them != 0 ||
		pawnAttacks[by^1][s]&p.pieces[Pawn]&them != 0 ||
		kingAttacks[s]&p.pieces[King]&them != 0 {
		return true
	}
	return BishopAttacks(s, occ)&(p.pieces[Bishop]|p.pieces[Queen])&them != 0 ||
		RookAttacks(s, occ)&(p.pieces[Rook]|p.pieces[Queen])&them != 0
}

func (p *Position) putPiece(pc Piece, s Square) {
	b := s.Bit()
	p.pieces[pc.Type()] |= b
	p.colors[pc.Color()] |= b
	p.board[s] = pc
	p.key ^= pieceKeys[pc][s]
}

func (p *Position) removePiece(s Square) {
	pc := p.board[s]
	b := s.Bit()
	p.pieces[pc.Type()] &^= b
	p.colors[pc.Color()] &^= b
	p.board[s] = NoPiece
	p.key ^= pieceKeys[pc][s]
}

func (p *Position) movePiece(from, to Square) {
	pc := p.board[from]
	ft := from.Bit() | to.Bit()
	p.pieces[pc.Type()] ^= ft
	p.colors[pc.Color()] ^= ft
	p.board[from] = NoPiece
	p.board[to] = pc
	p.key ^= pieceKeys[pc][from] ^ pieceKeys[pc][to]
}

// MakeMove plays m, which must be legal in p (from GenerateMoves or a Parse
// function). Keep a copy of p beforehand to go back (copy-make); nothing is
// allocated.
func (p *Position) MakeMove(m Move) {
	from, to := m.From(), m.To()
	us := p.side
	them := us ^ 1
	if p.ep != NoSquare {
		p.key ^= polyglotRandom[772+p.ep.File()]
		p.ep = NoSquare
	}
	p.halfmove++
	if p.castling != 0 && p.castleSquares&(from.Bit()|to.Bit()) != 0 {
		p.updateCastlingRights(from, to)
	}

	switch m & kindMask {
	case kindNormal:
		pc := p.board[from]
		if captured := p.board[to]; captured != NoPiece {
			p.removePiece(to)
			p.halfmove = 0
		}
		p.movePiece(from, to)
		switch pc.Type() {
		case Pawn:
			p.halfmove = 0
			if int(to)-int(from) == 16 || int(from)-int(to) == 16 {
				epSq := Square((int(from) + int(to)) / 2)
				if pawnAttacks[us][epSq]&p.pieces[Pawn]&p.colors[them] != 0 {
					p.ep = epSq
					p.key ^= polyglotRandom[772+epSq.File()]
				}
			}
		case King:
			p.kingSq[us] = to
		}
	case kindPromotion:
		if p.board[to] != NoPiece {
			p.removePiece(to)
		}
		p.removePiece(from)
		p.putPiece(MakePiece(us, m.Promotion()), to)
		p.halfmove = 0
	case kindEnPassant:
		capSq := to - 8
		if us == Black {
			capSq = to + 8
		}
		p.removePiece(capSq)
		p.movePiece(from, to)
		p.halfmove = 0
	case kindCastle:
		i := castleIndex(us, to > from)
		kingTo, rookTo := castleKingTo[i], castleRookTo[i]
		p.removePiece(to)
		p.removePiece(from)
		p.putPiece(MakePiece(us, King), kingTo)
		p.putPiece(MakePiece(us, Rook), rookTo)
		p.kingSq[us] = kingTo
	}

	p.side = them
	p.key ^= polyglotRandom[780]
	if us == Black {
		p.fullmove++
	}
}

// MakeNullMove passes the turn (for search); p must not be in check.
func (p *Position) MakeNullMove() {
	if p.ep != NoSquare {
		p.key ^= polyglotRandom[772+p.ep.File()]
		p.ep = NoSquare
	}
	p.halfmove++
	p.side ^= 1
	p.key ^= polyglotRandom[780]
}

// updateCastlingRights drops the rights whose king or rook leaves its
// square, or whose rook is captured there. Called before the move is made.
func (p *Position) updateCastlingRights(from, to Square) {
	var lost uint8
	for i := 0; i < 4; i++ {
		if r := p.castleRook[i]; from == r || to == r {
			lost |= 1 << i
		}
	}
	if from == p.kingSq[White] {
		lost |= WhiteOO | WhiteOOO
	} else if from == p.kingSq[Black] {
		lost |= BlackOO | BlackOOO
	}
	if lost &= p.castling; lost != 0 {
		p.key ^= castlingKeys[p.castling] ^ castlingKeys[p.castling&^lost]
		p.castling &^= lost
	}
}

// castleKingTo and castleRookTo are where king and rook end up, per right:
// the same squares in Chess960 as in standard chess.
var (
	castleKingTo = [4]Square{G1, C1, G8, C8}
	castleRookTo = [4]Square{F1, D1, F8, D8}
)

// castleIndex returns the index of a right (and of its castleConfig entries).
func castleIndex(c Color, kingside bool) int {
	i := int(c) * 2
	if !kingside {
		i++
	}
	return i
}

var (
	// pieceKeys[piece][square] are the Polyglot piece keys, indexed by our
	// Piece encoding.
	pieceKeys [16][64]uint64
	// castlingKeys[rights] is the xor of the Polyglot keys of those rights.
	castlingKeys [16]uint64
)

func init() {
	for c := White; c <= Black; c++ {
		for t := Pawn; t <= King; t++ {
			// Polyglot orders pieces black pawn, white pawn, black knight, …
			kind := 2 * int(t-Pawn)
			if c == White {
				kind++
			}
			for s := 0; s < 64; s++ {
				pieceKeys[MakePiece(c, t)][s] = polyglotRandom[64*kind+s]
			}
		}
	}
	for r := 0; r < 16; r++ {
		for i := 0; i < 4; i++ {
			if r&(1<<i) != 0 {
				castlingKeys[r] ^= polyglotRandom[768+i]
			}
		}
	}
}

// computeKey recomputes the Polyglot key from scratch (FEN parsing, tests).
func (p *Position) computeKey() uint64 {
	var k uint64
	for s := Square(0); s < 64; s++ {
		if pc := p.board[s]; pc != NoPiece {
			k ^= pieceKeys[pc][s]
		}
	}
	k ^= castlingKeys[p.castling]
	if p.ep != NoSquare {
		k ^= polyglotRandom[772+p.ep.File()]
	}
	if p.side == White {
		k ^= polyglotRandom[780]
	}
	return k
}
