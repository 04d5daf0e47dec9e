package engine

// Strictly legal move generation: no move is made and tested. The king's
// checkers give a check mask (squares that capture or block a single check),
// pinned pieces move only along the line through their king, king moves are
// tested against the attackers with the king lifted off the board, and the
// two awkward cases (en passant uncovering the king, Chess960 castling rooks)
// are tested explicitly.
//
// countLegal (LegalMoveCount) and GenerateMoves follow the same steps;
// countLegal adds popcounts instead of writing moves, so it pays for no
// move buffer. TestMoveCountAgrees checks that both agree on every test
// position. Perft itself runs on the perft core (perftboard.go and the
// generated perft_gen.go), a second, specialised generator that
// TestPerftCoreAgrees checks against this one.

// legalityInfo is what both the generator and the counter need first.
type legalityInfo struct {
	occ, ours, theirs Bitboard
	checkers          Bitboard
	checkMask         Bitboard // target squares that resolve the check (all if none)
	pinned            Bitboard
	theirRQ, theirBQ  Bitboard
	ksq               Square
}

func (p *Position) legality(li *legalityInfo) {
	us := p.side
	them := us ^ 1
	li.ksq = p.kingSq[us]
	li.ours = p.colors[us]
	li.theirs = p.colors[them]
	li.occ = li.ours | li.theirs
	li.theirRQ = (p.pieces[Rook] | p.pieces[Queen]) & li.theirs
	li.theirBQ = (p.pieces[Bishop] | p.pieces[Queen]) & li.theirs
	li.pinned = 0
	li.checkers = (knightAttacks[li.ksq]&p.pieces[Knight] | pawnAttacks[us][li.ksq]&p.pieces[Pawn]) & li.theirs
	// Sliders that could pin or check along a line through the king; the
	// magic lookups are skipped when none stands on such a line at all.
	var snipers Bitboard
	if rookRays[li.ksq]&li.theirRQ != 0 {
		snipers = RookAttacks(li.ksq, li.theirs) & li.theirRQ
	}
	if bishopRays[li.ksq]&li.theirBQ != 0 {
		snipers |= BishopAttacks(li.ksq, li.theirs) & li.theirBQ
	}
	for snipers != 0 {
		s := popFirst(&snipers)
		between := betweenBB[li.ksq][s] & li.occ
		if between == 0 {
			li.checkers |= s.Bit()
		} else if !between.More() {
			li.pinned |= between & li.ours
		}
	}
	li.checkMask = ^Bitboard(0)
	if li.checkers != 0 {
		c := li.checkers.First()
		li.checkMask = betweenBB[li.ksq][c] | li.checkers
	}
}

// pawnShift moves a set of pawns one rank forward for colour c.
func pawnShift(b Bitboard, c Color) Bitboard {
	if c == White {
		return b << 8
	}
	return b >> 8
}

// countLegal returns the number of legal moves without generating them.
func (p *Position) countLegal() int {
	var li legalityInfo
	p.legality(&li)
	us := p.side
	them := us ^ 1
	n := 0

	// King moves: lift the king so sliders see through its square.
	kingOcc := li.occ &^ li.ksq.Bit()
	for t := kingAttacks[li.ksq] &^ li.ours; t != 0; {
		s := popFirst(&t)
		if !p.attackedBy(s, them, kingOcc) {
			n++
		}
	}
	if li.checkers.More() {
		return n
	}
	targets := ^li.ours & li.checkMask
	free := li.ours &^ li.pinned

	for b := p.pieces[Knight] & free; b != 0; {
		n += (knightAttacks[popFirst(&b)] & targets).Count()
	}
	diag := (p.pieces[Bishop] | p.pieces[Queen]) & li.ours
	orth := (p.pieces[Rook] | p.pieces[Queen]) & li.ours
	for b := diag & free; b != 0; {
		n += (BishopAttacks(popFirst(&b), li.occ) & targets).Count()
	}
	for b := orth & free; b != 0; {
		n += (RookAttacks(popFirst(&b), li.occ) & targets).Count()
	}
	if li.checkers == 0 {
		// A pinned piece can only move when not in check, along its pin line.
		for b := diag & li.pinned; b != 0; {
			s := popFirst(&b)
			n += (BishopAttacks(s, li.occ) & targets & lineBB[li.ksq][s]).Count()
		}
		for b := orth & li.pinned; b != 0; {
			s := popFirst(&b)
			n += (RookAttacks(s, li.occ) & targets & lineBB[li.ksq][s]).Count()
		}
	}

	// Pawns, all at once for the unpinned ones.
	pawns := p.pieces[Pawn] & li.ours
	empty := ^li.occ
	var promoRank, doubleRank Bitboard = rank8, rank3
	if us == Black {
		promoRank, doubleRank = rank1, rank6
	}
	fp := pawns &^ li.pinned
	push1 := pawnShift(fp, us) & empty
	push2 := pawnShift(push1&doubleRank, us) & empty & li.checkMask
	push1 &= li.checkMask
	var capL, capR Bitboard
	if us == White {
		capL = (fp &^ fileA) << 7
		capR = (fp &^ fileH) << 9
	} else {
		capL = (fp &^ fileA) >> 9
		capR = (fp &^ fileH) >> 7
	}
	capL &= li.theirs & li.checkMask
	capR &= li.theirs & li.checkMask
	n += push2.Count()
	n += (push1 &^ promoRank).Count() + 4*(push1&promoRank).Count()
	n += (capL &^ promoRank).Count() + 4*(capL&promoRank).Count()
	n += (capR &^ promoRank).Count() + 4*(capR&promoRank).Count()
	if li.checkers == 0 {
		for b := pawns & li.pinned; b != 0; {
			s := popFirst(&b)
			line := lineBB[li.ksq][s]
			one := pawnShift(s.Bit(), us) & empty
			moves := one | pawnShift(one&doubleRank, us)&empty
			moves |= pawnAttacks[us][s] & li.theirs
			moves &= line
			n += (moves &^ promoRank).Count() + 4*(moves&promoRank).Count()
		}
	}
	if p.ep != NoSquare {
		for b := pawnAttacks[them][p.ep] & pawns; b != 0; {
			if p.epLegal(popFirst(&b), &li) {
				n++
			}
		}
	}
	if p.castling != 0 && li.checkers == 0 {
		for i := castleIndex(us, true); i <= castleIndex(us, false); i++ {
			// Most castlings fail on a piece between king and rook: test
			// that inline before the full check.
			if p.castling&(1<<i) != 0 && li.occ&betweenBB[li.ksq][p.castleRook[i]] == 0 && p.castleLegal(i, &li) {
				n++
			}
		}
	}
	return n
}

// epLegal tests an en-passant capture from 'from' by replaying the
// occupancy change: both pawns leave their squares and the capturer lands
// on the ep square; the king must not be attacked by a slider afterwards,
// and a check by a knight or pawn must be resolved by the capture itself.
func (p *Position) epLegal(from Square, li *legalityInfo) bool {
	capSq := p.ep - 8
	if p.side == Black {
		capSq = p.ep + 8
	}
	if !li.checkMask.Has(p.ep) && !li.checkMask.Has(capSq) {
		return false
	}
	occ := li.occ ^ from.Bit() ^ capSq.Bit() | p.ep.Bit()
	return RookAttacks(li.ksq, occ)&li.theirRQ == 0 && BishopAttacks(li.ksq, occ)&li.theirBQ == 0
}

// castleLegal tests right i of the side to move (not in check).
func (p *Position) castleLegal(i int, li *legalityInfo) bool {
	if p.castling&(1<<i) == 0 {
		return false
	}
	ksq, rsq := li.ksq, p.castleRook[i]
	cm := &castleMasks[i][ksq.File()][rsq.File()]
	if li.occ&cm.mustBeEmpty != 0 {
		return false
	}
	// With king and castling rook lifted: a rook that shielded the king's
	// destination (Chess960) no longer does.
	occ := li.occ &^ (ksq.Bit() | rsq.Bit())
	them := p.side ^ 1
	for path := cm.kingPath; path != 0; {
		if p.attackedBy(popFirst(&path), them, occ) {
			return false
		}
	}
	return true
}

// castleMask is what one castling needs, by right, king file and rook file:
// the squares that must be empty (king and rook excluded) and the squares
// the king passes or lands on (its start excluded: it is not in check).
type castleMask struct{ mustBeEmpty, kingPath Bitboard }

var castleMasks [4][8][8]castleMask

func init() {
	for i := 0; i < 4; i++ {
		back := 0
		if i >= 2 {
			back = 7
		}
		for kf := 0; kf < 8; kf++ {
			for rf := 0; rf < 8; rf++ {
				if kf == rf {
					continue
				}
				ksq, rsq := MakeSquare(kf, back), MakeSquare(rf, back)
				kto, rto := castleKingTo[i], castleRookTo[i]
				kingPath := betweenBB[ksq][kto] | kto.Bit()
				castleMasks[i][kf][rf] = castleMask{
					mustBeEmpty: (kingPath | betweenBB[rsq][rto] | rto.Bit()) &^ (ksq.Bit() | rsq.Bit()),
					// The destination stays in even when the king does not
					// move: the rook leaving may uncover it (Chess960).
					kingPath: betweenBB[ksq][kto] | kto.Bit(),
				}
			}
		}
	}
}

// GenerateMoves writes all legal moves into ml (replacing its contents).
func (p *Position) GenerateMoves(ml *MoveList) { p.generateFrom(ml, ^Bitboard(0)) }

// HasLegalMove reports whether the side to move has a legal move. It asks
// the cheapest pieces first and stops at the first that can move: pawns
// (no attack tables), knights, the sliders, and last the king, whose moves
// cost an attack test each.
func (p *Position) HasLegalMove() bool {
	var ml MoveList
	ours := p.colors[p.side]
	king := p.kingSq[p.side].Bit()
	pawns, knights := ours&p.pieces[Pawn], ours&p.pieces[Knight]
	for _, group := range [...]Bitboard{pawns, knights, ours &^ (pawns | knights | king), king} {
		if group == 0 {
			continue
		}
		if p.generateFrom(&ml, group); ml.N > 0 {
			return true
		}
	}
	return false
}

// generateFrom writes the legal moves of the pieces on the squares of from
// into ml (replacing its contents); castling counts as the king's move.
func (p *Position) generateFrom(ml *MoveList, from Bitboard) {
	ml.N = 0
	var li legalityInfo
	p.legality(&li)
	us := p.side
	them := us ^ 1

	if from.Has(li.ksq) {
		kingOcc := li.occ &^ li.ksq.Bit()
		for t := kingAttacks[li.ksq] &^ li.ours; t != 0; {
			s := popFirst(&t)
			if !p.attackedBy(s, them, kingOcc) {
				ml.add(newMove(li.ksq, s))
			}
		}
	}
	if li.checkers.More() {
		return
	}
	targets := ^li.ours & li.checkMask
	free := li.ours &^ li.pinned & from
	addAll := func(from Square, to Bitboard) {
		for to != 0 {
			ml.add(newMove(from, popFirst(&to)))
		}
	}
	for b := p.pieces[Knight] & free; b != 0; {
		s := popFirst(&b)
		addAll(s, knightAttacks[s]&targets)
	}
	diag := (p.pieces[Bishop] | p.pieces[Queen]) & li.ours & from
	orth := (p.pieces[Rook] | p.pieces[Queen]) & li.ours & from
	for b := diag; b != 0; {
		s := popFirst(&b)
		t := BishopAttacks(s, li.occ) & targets
		if li.pinned.Has(s) {
			if li.checkers != 0 {
				continue
			}
			t &= lineBB[li.ksq][s]
		}
		addAll(s, t)
	}
	for b := orth; b != 0; {
		s := popFirst(&b)
		t := RookAttacks(s, li.occ) & targets
		if li.pinned.Has(s) {
			if li.checkers != 0 {
				continue
			}
			t &= lineBB[li.ksq][s]
		}
		addAll(s, t)
	}

	pawns := p.pieces[Pawn] & li.ours & from
	empty := ^li.occ
	var promoRank, doubleRank Bitboard = rank8, rank3
	up := 8
	if us == Black {
		promoRank, doubleRank, up = rank1, rank6, -8
	}
	addPawn := func(from, to Square) {
		if promoRank.Has(to) {
			ml.add(newPromotion(from, to, Queen))
			ml.add(newPromotion(from, to, Rook))
			ml.add(newPromotion(from, to, Bishop))
			ml.add(newPromotion(from, to, Knight))
		} else {
			ml.add(newMove(from, to))
		}
	}
	for b := pawns; b != 0; {
		s := popFirst(&b)
		mask := li.checkMask
		if li.pinned.Has(s) {
			if li.checkers != 0 {
				continue
			}
			mask &= lineBB[li.ksq][s]
		}
		one := Square(int(s) + up)
		if empty.Has(one) {
			if mask.Has(one) {
				addPawn(s, one)
			}
			if doubleRank.Has(one) {
				two := Square(int(one) + up)
				if empty.Has(two) && mask.Has(two) {
					ml.add(newMove(s, two))
				}
			}
		}
		for c := pawnAttacks[us][s] & li.theirs & mask; c != 0; {
			addPawn(s, popFirst(&c))
		}
	}
	if p.ep != NoSquare {
		for b := pawnAttacks[them][p.ep] & pawns; b != 0; {
			s := popFirst(&b)
			if p.epLegal(s, &li) {
				ml.add(newMove(s, p.ep) | kindEnPassant)
			}
		}
	}
	if p.castling != 0 && li.checkers == 0 && from.Has(li.ksq) {
		for i := castleIndex(us, true); i <= castleIndex(us, false); i++ {
			if p.castleLegal(i, &li) {
				ml.add(newMove(li.ksq, p.castleRook[i]) | kindCastle)
			}
		}
	}
}

// LegalMoves returns the legal moves in a new slice (convenient, allocates).
func (p *Position) LegalMoves() []Move {
	var ml MoveList
	p.GenerateMoves(&ml)
	return append([]Move(nil), ml.Slice()...)
}

// LegalMoveCount returns the number of legal moves (no allocation).
func (p *Position) LegalMoveCount() int { return p.countLegal() }

// IsLegal reports whether m is a legal move in p.
func (p *Position) IsLegal(m Move) bool {
	var ml MoveList
	p.GenerateMoves(&ml)
	for _, x := range ml.Slice() {
		if x == m {
			return true
		}
	}
	return false
}
