package engine

// Move is a move in 16 bits: from (bits 0–5), to (6–11), promotion piece
// (12–13: knight, bishop, rook, queen) and kind (14–15). A castling move is
// stored as "king takes own rook" (to = the rook's square), which is the one
// encoding that works for Chess960 and standard chess alike; UCIMove prints
// it the way the position's mode expects.
type Move uint16

// NullMove is the zero move: no move.
const NullMove Move = 0

const (
	kindNormal    = 0
	kindPromotion = 1 << 14
	kindEnPassant = 2 << 14
	kindCastle    = 3 << 14
	kindMask      = 3 << 14
)

func newMove(from, to Square) Move { return Move(from) | Move(to)<<6 }

func newPromotion(from, to Square, pt PieceType) Move {
	return Move(from) | Move(to)<<6 | Move(pt-Knight)<<12 | kindPromotion
}

// From returns the origin square (the king's square for castling).
func (m Move) From() Square { return Square(m & 63) }

// To returns the destination square (the castling rook's square for castling).
func (m Move) To() Square { return Square(m>>6) & 63 }

// IsPromotion reports whether m promotes a pawn.
func (m Move) IsPromotion() bool { return m&kindMask == kindPromotion }

// Promotion returns the promotion piece type, or NoPieceType.
func (m Move) Promotion() PieceType {
	if !m.IsPromotion() {
		return NoPieceType
	}
	return PieceType((m>>12)&3) + Knight
}

// IsCastle reports whether m castles.
func (m Move) IsCastle() bool { return m&kindMask == kindCastle }

// IsEnPassant reports whether m is an en-passant capture.
func (m Move) IsEnPassant() bool { return m&kindMask == kindEnPassant }

// MoveList is a fixed-size move buffer, so generating moves allocates nothing.
// 256 exceeds the largest known number of legal moves (218).
type MoveList struct {
	Moves [256]Move
	N     int
}

// Slice returns the generated moves (aliasing the list's storage).
func (l *MoveList) Slice() []Move { return l.Moves[:l.N] }

func (l *MoveList) add(m Move) {
	l.Moves[l.N] = m
	l.N++
}
