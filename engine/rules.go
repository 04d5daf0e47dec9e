package engine

// IsCapture reports whether m captures (en passant included; castling, which
// is encoded as king-takes-own-rook, is not a capture).
func (p *Position) IsCapture(m Move) bool {
	return m.IsEnPassant() || !m.IsCastle() && p.board[m.To()] != NoPiece
}

// IsCheckmate reports whether the side to move is checkmated.
func (p *Position) IsCheckmate() bool { return p.InCheck() && !p.HasLegalMove() }

// IsStalemate reports whether the side to move has no legal move and is not
// in check.
func (p *Position) IsStalemate() bool { return !p.InCheck() && !p.HasLegalMove() }

// InsufficientMaterial reports a dead position by material alone (FIDE 5.2.2
// in its usual computable form): king against king, king and a minor piece
// against king, or kings and bishops all on squares of one colour.
func (p *Position) InsufficientMaterial() bool {
	if p.pieces[Pawn]|p.pieces[Rook]|p.pieces[Queen] != 0 {
		return false
	}
	minors := p.pieces[Knight] | p.pieces[Bishop]
	if minors.Count() <= 1 {
		return true
	}
	if p.pieces[Knight] == 0 {
		const dark Bitboard = 0xAA55AA55AA55AA55
		b := p.pieces[Bishop]
		return b&dark == 0 || b&^dark == 0
	}
	return false
}

// CanMate reports whether colour c still has material that could deliver
// mate in some sequence of legal moves; used for flag-fall (a player whose
// opponent cannot mate draws instead of losing on time). Conservative: a
// lone king can never mate; a single minor piece can only with help of the
// opponent's pieces, which FIDE counts as "could mate" unless the opponent
// has a bare king.
func (p *Position) CanMate(c Color) bool {
	ours := p.colors[c]
	if ours&(p.pieces[Pawn]|p.pieces[Rook]|p.pieces[Queen]) != 0 {
		return true
	}
	minors := ours & (p.pieces[Knight] | p.pieces[Bishop])
	switch {
	case minors == 0:
		return false
	case minors.More():
		// Two bishops on one colour cannot force or help mate against a bare
		// king, but can with enemy pieces present; treat as possible unless
		// the opponent has a bare king and the bishops share a colour.
		if ours&p.pieces[Knight] == 0 {
			const dark Bitboard = 0xAA55AA55AA55AA55
			sameColour := minors&dark == 0 || minors&^dark == 0
			if sameColour && p.colors[c^1].Count() == 1 {
				return false
			}
		}
		return true
	default:
		// King and one minor: mate only against a king with other pieces.
		return p.colors[c^1].Count() > 1
	}
}
