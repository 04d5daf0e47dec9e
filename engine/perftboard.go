package engine

import "math/bits"

// The perft core: a board made only of bitboards, and the generated,
// per-side move counters and generators in perft_gen.go (written by
// internal/perftgen from perft.go.tmpl). Position stays the engine's board
// for everything else; the core exists because perft spends almost all its
// time in one loop (make a move, count the replies) and pays for anything
// that loop does not need: the square-indexed board, the incremental Zobrist
// key, the move clocks.
//
// Invariants of a perftBoard (set up by newPerftBoard from a valid
// Position, kept by make and by the generated code's children):
//   - pieces[t] & colors[c] describe the placement; pieces[NoPieceType] is 0;
//   - ep is the en-passant target square as a one-bit set, only when a
//     pawn of the side to move attacks it (as in Position), else 0;
//   - castling holds the rights, and a right is held only while its king and
//     rook stand on the squares the perftCastling of the search says;
//   - rooks records the castling rooks' squares of the root position (fixed
//     for the whole search), so that two boards with equal fields (which
//     the table's hash takes as the same position) have the same legal
//     moves even in Chess960, where the same placement and rights can mean
//     other rooks.
type perftBoard struct {
	pieces   [7]Bitboard
	colors   [2]Bitboard
	ep       Bitboard
	castling uint8
	side     Color
	rooks    uint32 // the root's castleRook squares of its rights, 8 bits each
}

// perftCastling is what castling needs within one search: the squares of
// each right, fixed by the root position (rights are only ever lost).
type perftCastling struct {
	// loss[s] is the rights lost by a move from or to s (a king or a
	// castling rook leaving, a rook captured at home).
	loss  [64]uint8
	right [4]perftCastleRight // WhiteOO, WhiteOOO, BlackOO, BlackOOO
}

// perftCastleRight is one castling right's geometry.
type perftCastleRight struct {
	empty  Bitboard // squares that must be empty, king and rook excluded
	path   Bitboard // squares the king crosses or lands on, start excluded
	lift   Bitboard // king and rook: lifted off the board for the attack test
	kingFT Bitboard // king from | to (to = from is possible in Chess960)
	rookFT Bitboard
	// Where an enemy knight, pawn or king would attack the path, and the
	// lines through it on which an enemy slider might.
	knights, pawns, kings Bitboard
	diag, orth            Bitboard
}

func newPerftCastling(p *Position) perftCastling {
	var c perftCastling
	for i := 0; i < 4; i++ {
		if p.castling&(1<<i) == 0 {
			continue
		}
		color := Color(i / 2)
		ksq, rsq := p.kingSq[color], p.castleRook[i]
		kto, rto := castleKingTo[i], castleRookTo[i]
		cm := castleMasks[i][ksq.File()][rsq.File()]
		r := &c.right[i]
		r.empty, r.path = cm.mustBeEmpty, cm.kingPath
		r.lift = ksq.Bit() | rsq.Bit()
		r.kingFT = ksq.Bit() ^ kto.Bit()
		r.rookFT = rsq.Bit() ^ rto.Bit()
		for path := r.path; path != 0; {
			s := popFirst(&path)
			r.knights |= knightAttacks[s]
			r.pawns |= pawnAttacks[color][s]
			r.kings |= kingAttacks[s]
			r.diag |= bishopRays[s]
			r.orth |= rookRays[s]
		}
		c.loss[rsq] |= 1 << i
		c.loss[ksq] |= 1 << i
	}
	return c
}

// castleClear reports whether none of the sliders bq (diagonal) and rq
// (orthogonal) attacks r's path once king and rook are lifted (a Chess960
// rook may have shielded the king's destination). Usually one slider
// stands on such a line: look from it at the whole path rather than from
// each path square.
func castleClear(r *perftCastleRight, occ, bq, rq Bitboard) bool {
	o := occ &^ r.lift
	for x := bq; x != 0; {
		if BishopAttacks(popFirst(&x), o)&r.path != 0 {
			return false
		}
	}
	for x := rq; x != 0; {
		if RookAttacks(popFirst(&x), o)&r.path != 0 {
			return false
		}
	}
	return true
}

// newPerftBoard converts a Position (its invariants give the board's).
func newPerftBoard(p *Position) perftBoard {
	b := perftBoard{pieces: p.pieces, colors: p.colors, castling: p.castling, side: p.side}
	b.pieces[NoPieceType] = 0
	if p.ep != NoSquare {
		b.ep = p.ep.Bit()
	}
	for i := 0; i < 4; i++ {
		if p.castling&(1<<i) != 0 {
			b.rooks |= uint32(p.castleRook[i]) << (8 * i)
		}
	}
	return b
}

// A perftMove is a move of the core's lists: from, to, the moving piece's
// type and its kind (a promotion carries the new piece type).
type perftMove uint32

const (
	pmNormal    = 0
	pmPromotion = 1
	pmEnPassant = 2
	pmCastle    = 3
)

func newPerftMove(from, to Square, pt PieceType, kind uint32) perftMove {
	return perftMove(uint32(from) | uint32(to)<<6 | uint32(pt)<<12 | kind<<15)
}

func (m perftMove) from() Square         { return Square(m & 63) }
func (m perftMove) to() Square           { return Square(m>>6) & 63 }
func (m perftMove) pieceType() PieceType { return PieceType(m>>12) & 7 }
func (m perftMove) kind() uint32         { return uint32(m>>15) & 3 }

// perftMoveList holds one ply's moves. A castling move (kind pmCastle)
// keeps the index of its right in the to field.
type perftMoveList struct {
	moves [256]perftMove
	n     int
}

// add appends m; like MoveList, 256 moves are more than any position has
// (218 is the most known), and an impossible 257th panics rather than
// overwrite.
func (l *perftMoveList) add(m perftMove) {
	l.moves[l.n] = m
	l.n++
}

// make plays m on b (copy-make: b is left alone). Used above the last two
// plies, where speed matters little; the hot plies use the generated code.
func (c *perftCore) make(b *perftBoard, m perftMove) perftBoard {
	child := *b
	us := b.side
	them := us ^ 1
	from, to := m.from(), m.to()
	fb, tb := from.Bit(), to.Bit()
	child.ep = 0
	switch m.kind() {
	case pmNormal:
		child.capture(them, tb)
		child.pieces[m.pieceType()] ^= fb | tb
		child.colors[us] ^= fb | tb
		if m.pieceType() == Pawn && (from^to) == 16 {
			ep := Square((int(from) + int(to)) / 2)
			if pawnAttacks[us][ep]&b.pieces[Pawn]&b.colors[them] != 0 {
				child.ep = ep.Bit()
			}
		}
	case pmPromotion:
		child.capture(them, tb)
		child.pieces[Pawn] ^= fb
		child.pieces[m.pieceType()] ^= tb
		child.colors[us] ^= fb | tb
	case pmEnPassant:
		capBB := pawnPush(tb, them)
		child.pieces[Pawn] ^= fb | tb | capBB
		child.colors[us] ^= fb | tb
		child.colors[them] ^= capBB
	case pmCastle:
		r := &c.castle.right[to&3] // a castling move keeps its right in the to field
		child.pieces[King] ^= r.kingFT
		child.pieces[Rook] ^= r.rookFT
		child.colors[us] ^= r.kingFT ^ r.rookFT
		child.castling &^= castleRightsOf(us)
		child.side = them
		return child
	}
	if child.castling != 0 {
		child.castling &^= c.castle.loss[from] | c.castle.loss[to]
	}
	child.side = them
	return child
}

// capture removes whatever of colour them stands on tb (maybe nothing),
// without a branch: whether a move captures is hard to predict.
func (b *perftBoard) capture(them Color, tb Bitboard) {
	b.pieces[Pawn] &^= tb
	b.pieces[Knight] &^= tb
	b.pieces[Bishop] &^= tb
	b.pieces[Rook] &^= tb
	b.pieces[Queen] &^= tb
	b.colors[them] &^= tb
}

// castleRightsOf returns both rights of colour c.
func castleRightsOf(c Color) uint8 {
	if c == White {
		return WhiteOO | WhiteOOO
	}
	return BlackOO | BlackOOO
}

// Side-relative pawn geometry. Each takes its colour as a constant in the
// generated code, so after inlining only one branch remains.

// pawnPush moves a set of pawns one rank forward for colour c.
func pawnPush(b Bitboard, c Color) Bitboard {
	if c == White {
		return b << 8
	}
	return b >> 8
}

// pawnBack is pawnPush's inverse: from a push's destination to its origin.
func pawnBack(b Bitboard, c Color) Bitboard {
	if c == White {
		return b >> 8
	}
	return b << 8
}

// pawnWest and pawnEast are the squares c's pawns capture towards the a-file
// and towards the h-file.
func pawnWest(b Bitboard, c Color) Bitboard {
	if c == White {
		return (b &^ fileA) << 7
	}
	return (b &^ fileA) >> 9
}

func pawnEast(b Bitboard, c Color) Bitboard {
	if c == White {
		return (b &^ fileH) << 9
	}
	return (b &^ fileH) >> 7
}

// westFrom and eastFrom map a capture's destination back to its origin.
func westFrom(s Square, c Color) Square {
	if c == White {
		return s - 7
	}
	return s + 9
}

func eastFrom(s Square, c Color) Square {
	if c == White {
		return s - 9
	}
	return s + 7
}

func pushFrom(s Square, c Color) Square {
	if c == White {
		return s - 8
	}
	return s + 8
}

// relRank returns rank r (0 = first) as seen by colour c.
func relRank(r int, c Color) Bitboard {
	if c == White {
		return rank1 << (8 * r)
	}
	return rank1 << (8 * (7 - r))
}

// popCount is Bitboard.Count as a uint64, for the counters' sums.
func popCount(b Bitboard) uint64 { return uint64(bits.OnesCount64(uint64(b))) }

// addPawn adds a pawn move, as four promotions when it reaches promo.
func (l *perftMoveList) addPawn(from, to Square, promo Bitboard) {
	if promo&to.Bit() == 0 {
		l.add(newPerftMove(from, to, Pawn, pmNormal))
		return
	}
	for pt := Queen; pt >= Knight; pt-- {
		l.add(newPerftMove(from, to, pt, pmPromotion))
	}
}

// perftHarmless finds the moves (quiet moves, and captures by knights,
// sliders and pawns; no castling, e.p. or promotion) after which the
// opponent has the legal moves it would have after a null move (the side
// to move passing), or those but for the moves of some of its pieces:
// perft2 counts such moves with one count of the null-move position plus
// the difference (perftCore.delta for a quiet move: the sliders whose rays
// the move touches are looked up again, the pawns counted again;
// perftCore.captureDelta for a capture: the same, less the captured
// piece's moves, plus one for each knight or slider of theirs that reached
// the captured square). MPerft calls the exact kind null-move counting.
//
// Their legal moves are those of their king (castling included), knights,
// sliders and pawns; they are not in check after the null move (we are
// not in check: perft2 passes none then, and the side not to move never
// is). A move qualifies when:
//   - it changes nothing around their king: not the occupancy of its
//     squares or of the squares its castling needs empty (badFrom, badTo),
//     and not our attacks on the zone (where their king can step, the
//     squares its castling crosses) or on the king itself: the moving piece
//     attacks none of them from where it lands (knightT, pawnT, kingT are
//     the squares from which a knight, pawn or king would; neighbours of
//     their king holding their own pieces are not in the zone, since
//     whether we attack them changes none of their moves; reachDiag and
//     reachOrth are those of a slider, each line seen from its zone end),
//     did not attack them from where it stood (badFrom),
//     and opens or closes no line of another slider of ours towards them
//     (badFrom, badTo); lines are judged with their castling king and
//     rooks lifted, as the castling test sees them;
//   - along the lines through their king no check appears and no pin of
//     theirs appears or goes: kingLineBans for our sliders already on such
//     a line (by the pieces between), lineSafe for a slider landing on one;
//     so their pins stay, and their king's moves and castlings stay;
//   - a capture takes no castling rook of theirs (rookHomes: their rights
//     would change);
//   - a double push passes no square their pawns attack (pawnAtt: that
//     would give them an e.p. capture).
//
// Then their knights keep their moves (a knight's move to a square is one
// move whether it captures or not; a capture adds one for each knight
// that reaches the square), a slider of theirs whose attacks include
// neither square of the move keeps its moves (sens holds all their
// sliders' attacks), and their pawns keep theirs unless the move touches
// pawnSens (their pawns' captures and pushes) or takes a pawn. Each rule
// errs on the safe side; TestPerftCoreAgrees compares perft 2 with the
// plain count on every test position (and fails when a delta term is
// left out).
type perftHarmless struct {
	badFrom, badTo        Bitboard
	zone                  Bitboard
	lift                  Bitboard // their castling king and rooks (lifted for the path test)
	knightT, pawnT, kingT Bitboard
	diagK, orthK          Bitboard // the lines through their king
	sens, pawnSens        Bitboard
	pawnAtt               Bitboard // their pawns' attacks
	pinned                Bitboard // their pieces pinned by ours
	rookHomes             Bitboard // their castling rooks: capturing one takes a right
	reachDiag, reachOrth  Bitboard // where our sliders would attack the zone
	// pinner is our one slider that pins a piece of theirs (if one does):
	// along the pin line, short of the piece it pins, it may move where
	// pinnerBadTo allows (badTo but for the squares of its own pin) and it
	// attacks no zone square: the pin stays the same pin.
	pinner, pinnerBadTo Bitboard
	// For zone moves (perftCore.zoneKnightWhite, zoneKingMoves): zBadFrom
	// is badFrom but for the pieces that stand where they attack the zone,
	// zBadTo is badTo with rookHomes; zoneReady adds the open lines of our
	// sliders to guarded zone squares to zBadTo and fills sliderK and
	// cpath, on the first zone candidate of the position.
	zBadFrom, zBadTo Bitboard
	kingT0           Bitboard // their king's squares that hold none of theirs
	sliderK          Bitboard // those our sliders attack
	// What our pawns, king and knights attack (occupancy aside).
	byPawns, byKing, byKnights Bitboard
	cpath                      [2]Bitboard // see zoneReady
	zoneReady                  bool        // zoneReady has completed the fields above
	pawnMoves                  uint64      // their pawns' legal moves after a null move
	tk                         Square      // their king
	nSliders                   int
	attacks                    [16]Bitboard // sliders[i].attacks, packed for delta's scan
	sliders                    [16]perftSlider
}

// perftSlider is one of their sliders in the null-move position.
type perftSlider struct {
	attacks    Bitboard
	line       Bitboard // where it may move: all, or its pin line
	moves      uint64   // its legal moves
	sq         Square
	diag, orth bool
}

// lineSafe reports whether our slider, landing on the empty square s
// where it moves along lines (the lines through their king of its kind:
// diagK, orthK or both), neither checks their king nor pins a piece of
// theirs: s is on no such line, or between s and their king stand two
// pieces or more, or one of ours (occ is the occupancy with the slider
// lifted off its square, ours our pieces). A check or a new pin would
// change their moves; with two pieces between, or our own, nothing does.
func (h *perftHarmless) lineSafe(s Square, lines, occ, ours Bitboard) bool {
	if lines&s.Bit() == 0 {
		return true
	}
	between := betweenBB[h.tk&63][s&63] & occ
	if between&(between-1) != 0 {
		return true
	}
	return between&ours != 0
}

// kingLineBans returns, for our slider on s on a line with their king on
// tk, the squares a quiet move of ours may not leave (from) or fill (to)
// if their moves are to stay those after a null move: no check may appear
// and no pin of theirs appear or go. It depends on the pieces between:
//   - one of theirs: it is pinned; the slider must stay, and filling the
//     line would free it;
//   - one of ours: leaving it would give check; filling makes two;
//   - one of ours and one of theirs: leaving ours would pin theirs;
//   - two of ours, two of theirs, or three or more: nothing a quiet move
//     does to one square changes that.
//
// pin reports the first case (the slider pins the piece between): the
// slider may then still move along the line, see perftHarmless.pinner.
func kingLineBans(s, tk Square, occ, ours Bitboard) (from, to Bitboard, pin bool) {
	seg := betweenBB[tk&63][s&63]
	k := seg & occ
	switch {
	case k == 0: // a check with us to move: not a legal position
		return seg | s.Bit(), seg, false
	case k&(k-1) == 0 && k&ours == 0:
		return s.Bit(), seg, true
	case k&(k-1) == 0:
		return k, 0, false
	}
	if rest := k & (k - 1); rest&(rest-1) == 0 && k&ours != 0 && k&^ours != 0 {
		return k & ours, 0, false
	}
	return 0, 0, false
}

// rayPast returns the squares on the line from s through to that lie past
// to, seen from s (along a line the square index only grows or only
// shrinks).
func rayPast(s, to Square) Bitboard {
	line := lineBB[s&63][to&63]
	tb := to.Bit()
	if to > s {
		return line &^ (tb | (tb - 1))
	}
	return line & (tb - 1)
}

// knightSpread returns the squares a knight on any square of b attacks
// (the squares from which a knight attacks one of b's).
func knightSpread(b Bitboard) Bitboard {
	l1 := (b >> 1) & 0x7f7f7f7f7f7f7f7f
	l2 := (b >> 2) & 0x3f3f3f3f3f3f3f3f
	r1 := (b << 1) & 0xfefefefefefefefe
	r2 := (b << 2) & 0xfcfcfcfcfcfcfcfc
	h1, h2 := l1|r1, l2|r2
	return h1<<16 | h1>>16 | h2<<8 | h2>>8
}

// kingSpread returns the squares next to any square of b.
func kingSpread(b Bitboard) Bitboard {
	side := (b<<1)&^fileA | (b>>1)&^fileH
	row := b | side
	return side | row<<8 | row>>8
}

// inertPromotions returns the promotion types (bit 1<<pt, Knight to
// Queen) that would do nothing to their king from s: no check, no pin, no
// attack on a square next to their king or on the path of a castling
// right they hold (lines seen with their king and castling rooks lifted,
// as the king-move and castling tests see them). child is the board after
// the promotion but for the new piece: the pawn gone, s held by us, no
// piece type on s. A piece on s blocks the same lines whatever its type,
// so with any inert type on s they have the same legal moves.
func (c *perftCore) inertPromotions(child *perftBoard, s Square, them Color) uint8 {
	ours := child.colors[them^1]
	theirKing := child.pieces[King] & child.colors[them]
	tk := theirKing.First() & 63
	zone := kingAttacks[tk] | theirKing
	occ := ours | child.colors[them]
	lifted := occ ^ theirKing
	if rights := child.castling & castleRightsOf(them); rights != 0 {
		for i := range c.castle.right {
			if rights&(1<<i) != 0 {
				zone |= c.castle.right[i].path
				lifted &^= c.castle.right[i].lift
			}
		}
	}
	var inert uint8
	if knightAttacks[s]&zone == 0 {
		inert |= 1 << Knight
	}
	// On a line through their king a slider checks (nothing between) or
	// pins (one piece of theirs between); two pieces, or one of ours,
	// between: neither.
	between := betweenBB[tk][s&63] & occ
	lineQuiet := between&(between-1) != 0 || between&ours != 0
	diag := (bishopRays[s]&theirKing == 0 || lineQuiet) && BishopAttacks(s, lifted)&zone == 0
	orth := (rookRays[s]&theirKing == 0 || lineQuiet) && RookAttacks(s, lifted)&zone == 0
	if diag {
		inert |= 1 << Bishop
	}
	if orth {
		inert |= 1 << Rook
	}
	if diag && orth {
		inert |= 1 << Queen
	}
	return inert
}

// zoneKingMoves returns their king's moves, castling included, after a
// zone move (see zoneKnightWhite) when the piece moved attacks a and our
// other knights, pawns and king attack others. It holds for a null move
// too, with a the piece's attacks from where it stands: a zone move's
// difference is the difference of two calls.
func (h *perftHarmless) zoneKingMoves(others, a Bitboard) uint64 {
	att := others | a
	n := popCount(h.kingT0 &^ (att | h.sliderK))
	if h.cpath[0]&att == 0 {
		n++
	}
	if h.cpath[1]&att == 0 {
		n++
	}
	return n
}
