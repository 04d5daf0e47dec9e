package search

import "github.com/arbiter-chess/arbiter/engine"

// seeValue is the static-exchange value of each piece type. Fixed rather
// than taken from the evaluation: SEE only has to order and prune exchanges.
var seeValue = [7]int{0, 100, 320, 330, 500, 950, 20000}

// attackersTo returns the pieces of both colours attacking s through occ.
func attackersTo(p *engine.Position, s engine.Square, occ engine.Bitboard) engine.Bitboard {
	bq := p.TypePieces(engine.Bishop) | p.TypePieces(engine.Queen)
	rq := p.TypePieces(engine.Rook) | p.TypePieces(engine.Queen)
	return engine.PawnAttacks(engine.White, s)&p.Pieces(engine.Black, engine.Pawn) |
		engine.PawnAttacks(engine.Black, s)&p.Pieces(engine.White, engine.Pawn) |
		engine.KnightAttacks(s)&p.TypePieces(engine.Knight) |
		engine.KingAttacks(s)&p.TypePieces(engine.King) |
		engine.BishopAttacks(s, occ)&bq |
		engine.RookAttacks(s, occ)&rq
}

// capturedType is the type of the piece m takes (a pawn for en passant),
// or NoPieceType.
func capturedType(p *engine.Position, m engine.Move) engine.PieceType {
	if m.IsEnPassant() {
		return engine.Pawn
	}
	if m.IsCastle() {
		return engine.NoPieceType
	}
	return p.PieceAt(m.To()).Type()
}

// seeGE reports whether the static exchange on m's square wins at least
// threshold for the mover: both sides recapture with their least valuable
// attacker, each may stop when continuing loses. Pins are ignored (as in
// most engines: SEE is a heuristic for ordering and pruning).
func seeGE(p *engine.Position, m engine.Move, threshold int) bool {
	if m.IsCastle() || m.IsPromotion() {
		return threshold <= 0
	}
	from, to := m.From(), m.To()
	swap := seeValue[capturedType(p, m)] - threshold
	if swap < 0 {
		return false
	}
	swap = seeValue[p.PieceAt(from).Type()] - swap
	if swap <= 0 {
		return true
	}
	occ := p.Occupied() ^ from.Bit() | to.Bit()
	if m.IsEnPassant() {
		// the captured pawn stands behind the target square
		if p.SideToMove() == engine.White {
			occ &^= (to - 8).Bit()
		} else {
			occ &^= (to + 8).Bit()
		}
	}
	stm := p.SideToMove()
	attackers := attackersTo(p, to, occ) & occ
	bq := p.TypePieces(engine.Bishop) | p.TypePieces(engine.Queen)
	rq := p.TypePieces(engine.Rook) | p.TypePieces(engine.Queen)
	res := 1
	for {
		stm ^= 1
		attackers &= occ
		mine := attackers & p.ColorPieces(stm)
		if mine == 0 {
			break
		}
		res ^= 1
		var b engine.Bitboard
		switch {
		case mine&p.TypePieces(engine.Pawn) != 0:
			b = mine & p.TypePieces(engine.Pawn)
			if swap = seeValue[engine.Pawn] - swap; swap < res {
				return res == 1
			}
			occ ^= b & -b
			attackers |= engine.BishopAttacks(to, occ) & bq
		case mine&p.TypePieces(engine.Knight) != 0:
			b = mine & p.TypePieces(engine.Knight)
			if swap = seeValue[engine.Knight] - swap; swap < res {
				return res == 1
			}
			occ ^= b & -b
		case mine&p.TypePieces(engine.Bishop) != 0:
			b = mine & p.TypePieces(engine.Bishop)
			if swap = seeValue[engine.Bishop] - swap; swap < res {
				return res == 1
			}
			occ ^= b & -b
			attackers |= engine.BishopAttacks(to, occ) & bq
		case mine&p.TypePieces(engine.Rook) != 0:
			b = mine & p.TypePieces(engine.Rook)
			if swap = seeValue[engine.Rook] - swap; swap < res {
				return res == 1
			}
			occ ^= b & -b
			attackers |= engine.RookAttacks(to, occ) & rq
		case mine&p.TypePieces(engine.Queen) != 0:
			b = mine & p.TypePieces(engine.Queen)
			if swap = seeValue[engine.Queen] - swap; swap < res {
				return res == 1
			}
			occ ^= b & -b
			attackers |= engine.BishopAttacks(to, occ)&bq | engine.RookAttacks(to, occ)&rq
		default: // only the king is left: it may take only if nothing recaptures
			if attackers&^p.ColorPieces(stm) != 0 {
				return res == 0
			}
			return res == 1
		}
	}
	return res == 1
}
