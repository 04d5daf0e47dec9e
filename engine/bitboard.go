package engine

import "math/bits"

// Bitboard is a set of squares, bit i set for square i (A1 = 0, H8 = 63).
type Bitboard uint64

// Square is a board square, A1 = 0, B1 = 1, …, H8 = 63. NoSquare marks
// "none" (for example no en-passant square).
type Square uint8

// The squares, named as on a diagram.
const (
	A1, B1, C1, D1, E1, F1, G1, H1 Square = 8*iota + 0, 8*iota + 1, 8*iota + 2, 8*iota + 3, 8*iota + 4, 8*iota + 5, 8*iota + 6, 8*iota + 7
	A2, B2, C2, D2, E2, F2, G2, H2
	A3, B3, C3, D3, E3, F3, G3, H3
	A4, B4, C4, D4, E4, F4, G4, H4
	A5, B5, C5, D5, E5, F5, G5, H5
	A6, B6, C6, D6, E6, F6, G6, H6
	A7, B7, C7, D7, E7, F7, G7, H7
	A8, B8, C8, D8, E8, F8, G8, H8
	NoSquare Square = 64
)

// MakeSquare returns the square on file f (0 = a) and rank r (0 = first).
func MakeSquare(file, rank int) Square { return Square(rank*8 + file) }

// File is 0 for the a-file … 7 for the h-file.
func (s Square) File() int { return int(s) & 7 }

// Rank is 0 for the first rank … 7 for the eighth.
func (s Square) Rank() int { return int(s) >> 3 }

func (s Square) String() string {
	if s >= NoSquare {
		return "-"
	}
	return string([]byte{byte('a' + s.File()), byte('1' + s.Rank())})
}

// ParseSquare reads a square in algebraic notation ("e4").
func ParseSquare(s string) (Square, bool) {
	if len(s) != 2 || s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8' {
		return NoSquare, false
	}
	return MakeSquare(int(s[0]-'a'), int(s[1]-'1')), true
}

// Bit returns the one-square set {s}.
func (s Square) Bit() Bitboard { return 1 << s }

// Count returns the number of squares in b.
func (b Bitboard) Count() int { return bits.OnesCount64(uint64(b)) }

// First returns the lowest square in b; b must not be empty.
func (b Bitboard) First() Square { return Square(bits.TrailingZeros64(uint64(b))) }

// Has reports whether s is in b.
func (b Bitboard) Has(s Square) bool { return b&(1<<s) != 0 }

// More reports whether b has more than one square.
func (b Bitboard) More() bool { return b&(b-1) != 0 }

// popFirst removes and returns the lowest square of *b.
func popFirst(b *Bitboard) Square {
	s := Square(bits.TrailingZeros64(uint64(*b)))
	*b &= *b - 1
	return s
}

const (
	fileA Bitboard = 0x0101010101010101
	fileH Bitboard = fileA << 7
	rank1 Bitboard = 0xFF
	rank2 Bitboard = rank1 << 8
	rank3 Bitboard = rank1 << 16
	rank6 Bitboard = rank1 << 40
	rank7 Bitboard = rank1 << 48
	rank8 Bitboard = rank1 << 56
)

// Color is the side: White or Black.
type Color uint8

// The two sides.
const (
	White Color = iota
	Black
)

// Other returns the opponent.
func (c Color) Other() Color { return c ^ 1 }

func (c Color) String() string {
	if c == White {
		return "white"
	}
	return "black"
}

// PieceType is a kind of piece without its colour.
type PieceType uint8

// The piece types. NoPieceType is zero so that an empty square reads as none.
const (
	NoPieceType PieceType = iota
	Pawn
	Knight
	Bishop
	Rook
	Queen
	King
)

// Piece is a coloured piece: type in the low 3 bits, colour in bit 3.
// NoPiece (0) is an empty square.
type Piece uint8

// NoPiece is an empty square.
const NoPiece Piece = 0

// MakePiece combines a colour and a type.
func MakePiece(c Color, t PieceType) Piece { return Piece(uint8(c)<<3 | uint8(t)) }

// Type returns the piece type.
func (p Piece) Type() PieceType { return PieceType(p & 7) }

// Color returns the piece colour; meaningless for NoPiece.
func (p Piece) Color() Color { return Color(p >> 3) }

const pieceLetters = " PNBRQK  pnbrqk"

// Letter returns the FEN letter of p (upper case for White), or ' '.
func (p Piece) Letter() byte { return pieceLetters[p] }

// pieceFromLetter reads a FEN piece letter.
func pieceFromLetter(c byte) (Piece, bool) {
	for i := 1; i < len(pieceLetters); i++ {
		if pieceLetters[i] == c && c != ' ' {
			return Piece(i), true
		}
	}
	return NoPiece, false
}
