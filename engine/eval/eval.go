// Package eval is Arbiter's hand-crafted evaluation: a tapered
// (middlegame/endgame) sum of material, PeSTO piece-square tables,
// mobility, pawn structure, passed pawns, king safety, bishop pair, rooks on
// open files and tempo. Every weight is a Param (see weights.go), so each
// becomes a UCI option and settings can be compared by SPRT.
//
// The evaluator is read-only once built: one *Evaluator is shared by every
// search thread.
package eval

import (
	"math/bits"

	"github.com/arbiter-chess/arbiter/engine"
)

// Mate-free bounds for evaluations: a static evaluation never reaches them,
// so the search can tell it apart from mate scores.
const MaxEval = 20000

// Evaluator scores positions with one setting of the weights.
type Evaluator struct {
	w Weights
	// psq[c][t][s] is material plus square bonus of a c piece of type t on s,
	// precomputed so the piece loop adds one number per phase.
	psqMG, psqEG [2][7][64]int32
}

// New builds an evaluator for w.
func New(w Weights) *Evaluator {
	e := &Evaluator{w: w}
	valMG := [7]int{0, w[PawnMG], w[KnightMG], w[BishopMG], w[RookMG], w[QueenMG], 0}
	valEG := [7]int{0, w[PawnEG], w[KnightEG], w[BishopEG], w[RookEG], w[QueenEG], 0}
	for t := engine.Pawn; t <= engine.King; t++ {
		for s := 0; s < 64; s++ {
			e.psqMG[engine.White][t][s] = int32(valMG[t] + pstMG[t][s^56])
			e.psqEG[engine.White][t][s] = int32(valEG[t] + pstEG[t][s^56])
			e.psqMG[engine.Black][t][s] = int32(valMG[t] + pstMG[t][s])
			e.psqEG[engine.Black][t][s] = int32(valEG[t] + pstEG[t][s])
		}
	}
	return e
}

// Default is an evaluator with the default weights.
func Default() *Evaluator { return New(DefaultWeights()) }

// Weights returns the evaluator's weights.
func (e *Evaluator) Weights() Weights { return e.w }

const (
	fileA engine.Bitboard = 0x0101010101010101
	rank1 engine.Bitboard = 0xff
)

var (
	fileMask     [8]engine.Bitboard
	adjacentMask [8]engine.Bitboard     // the files beside file f
	passedMask   [2][64]engine.Bitboard // squares in front on this and adjacent files
	frontMask    [2][64]engine.Bitboard // squares in front on this file
)

func init() {
	for f := 0; f < 8; f++ {
		fileMask[f] = fileA << f
		if f > 0 {
			adjacentMask[f] |= fileA << (f - 1)
		}
		if f < 7 {
			adjacentMask[f] |= fileA << (f + 1)
		}
	}
	for s := 0; s < 64; s++ {
		f, r := s&7, s>>3
		for rr := r + 1; rr < 8; rr++ {
			frontMask[engine.White][s] |= 1 << (rr*8 + f)
		}
		for rr := r - 1; rr >= 0; rr-- {
			frontMask[engine.Black][s] |= 1 << (rr*8 + f)
		}
		for c := engine.White; c <= engine.Black; c++ {
			fm := frontMask[c][s]
			passedMask[c][s] = fm
			if f > 0 {
				passedMask[c][s] |= fm >> 1
			}
			if f < 7 {
				passedMask[c][s] |= fm << 1
			}
		}
	}
}

// pawnAttacksAll returns every square the pawns of c attack.
func pawnAttacksAll(pawns engine.Bitboard, c engine.Color) engine.Bitboard {
	const notA, notH engine.Bitboard = ^fileA, ^(fileA << 7)
	if c == engine.White {
		return (pawns&notA)<<7 | (pawns&notH)<<9
	}
	return (pawns&notA)>>9 | (pawns&notH)>>7
}

func pop(b *engine.Bitboard) engine.Square {
	s := engine.Square(bits.TrailingZeros64(uint64(*b)))
	*b &= *b - 1
	return s
}

// mobility baselines: the typical number of safe squares, so that mobility
// is a bonus above and a penalty below the usual.
var mobBase = [7]int{engine.Knight: 4, engine.Bishop: 6, engine.Rook: 7, engine.Queen: 13}

// evalTerms is one evaluation's running sums and the board facts its
// terms share, per colour.
type evalTerms struct {
	mg, eg    [2]int
	phase     int
	npm       [2]int // non-pawn material (middlegame values), for scaling
	occ       engine.Bitboard
	pawns     [2]engine.Bitboard
	pawnAtt   [2]engine.Bitboard
	kingZone  [2]engine.Bitboard
	attackers [2]int // pieces attacking c's king zone
	attack    [2]int // their attack units against c's king
}

// pieceWeights are the weights (indices into the weight vector) and the
// game phase of one piece type.
type pieceWeights struct {
	mobMG, mobEG, kingAttack, material, phase int
}

var pieceTerms = [7]pieceWeights{
	engine.Knight: {MobKnightMG, MobKnightEG, KingAttackKnight, KnightMG, 1},
	engine.Bishop: {MobBishopMG, MobBishopEG, KingAttackBishop, BishopMG, 1},
	engine.Rook:   {MobRookMG, MobRookEG, KingAttackRook, RookMG, 2},
	engine.Queen:  {MobQueenMG, MobQueenEG, KingAttackQueen, QueenMG, 4},
}

// Evaluate returns the score of p in centipawns from the side to move's
// point of view. It allocates nothing.
func (e *Evaluator) Evaluate(p *engine.Position) int {
	w := &e.w
	var t evalTerms
	t.occ = p.Occupied()
	t.pawns = [2]engine.Bitboard{p.Pieces(engine.White, engine.Pawn), p.Pieces(engine.Black, engine.Pawn)}
	t.pawnAtt = [2]engine.Bitboard{pawnAttacksAll(t.pawns[0], engine.White), pawnAttacksAll(t.pawns[1], engine.Black)}
	for c := engine.White; c <= engine.Black; c++ {
		t.kingZone[c] = engine.KingAttacks(p.KingSquare(c)) | p.KingSquare(c).Bit()
	}
	for c := engine.White; c <= engine.Black; c++ {
		e.pawnTerms(&t, c)
		if p.Pieces(c, engine.Bishop).More() {
			t.mg[c] += w[BishopPairMG]
			t.eg[c] += w[BishopPairEG]
		}
		for pt := engine.Knight; pt <= engine.Queen; pt++ {
			e.pieceTerms(&t, p, c, pt)
		}
		ks := p.KingSquare(c)
		t.mg[c] += int(e.psqMG[c][engine.King][ks]) + e.shield(ks, c, t.pawns[c])
		t.eg[c] += int(e.psqEG[c][engine.King][ks])
	}
	e.kingSafety(&t)
	us := p.SideToMove()
	t.mg[us] += w[TempoMG]
	t.eg[us] += w[TempoEG]
	score := e.scale(&t)
	if us == engine.Black {
		score = -score
	}
	return min(max(score, -MaxEval), MaxEval)
}

// pawnTerms adds c's pawns: their squares, doubled, isolated and passed.
func (e *Evaluator) pawnTerms(t *evalTerms, c engine.Color) {
	w := &e.w
	them := c ^ 1
	psqMG, psqEG := &e.psqMG[c], &e.psqEG[c]
	for b := t.pawns[c]; b != 0; {
		s := pop(&b)
		t.mg[c] += int(psqMG[engine.Pawn][s])
		t.eg[c] += int(psqEG[engine.Pawn][s])
		if frontMask[c][s]&t.pawns[c] != 0 {
			t.mg[c] -= w[DoubledMG]
			t.eg[c] -= w[DoubledEG]
		}
		if adjacentMask[s.File()]&t.pawns[c] == 0 {
			t.mg[c] -= w[IsolatedMG]
			t.eg[c] -= w[IsolatedEG]
		}
		if passedMask[c][s]&t.pawns[them] == 0 && frontMask[c][s]&t.pawns[c] == 0 {
			r := s.Rank()
			if c == engine.Black {
				r = 7 - r
			}
			if r >= 1 && r <= 6 {
				i := Passed2MG + 2*(r-1)
				t.mg[c] += w[i]
				t.eg[c] += w[i+1]
			}
		}
	}
}

// pieceTerms adds c's pieces of type pt (knight to queen): their squares,
// mobility over the squares no enemy pawn attacks, attacks on the enemy
// king's zone, and a rook's open or half-open file.
func (e *Evaluator) pieceTerms(t *evalTerms, p *engine.Position, c engine.Color, pt engine.PieceType) {
	w := &e.w
	pw := &pieceTerms[pt]
	them := c ^ 1
	mobArea := ^p.ColorPieces(c) &^ t.pawnAtt[them]
	psqMG, psqEG := &e.psqMG[c][pt], &e.psqEG[c][pt]
	for b := p.Pieces(c, pt); b != 0; {
		s := pop(&b)
		t.mg[c] += int(psqMG[s])
		t.eg[c] += int(psqEG[s])
		var a engine.Bitboard
		switch pt {
		case engine.Knight:
			a = engine.KnightAttacks(s)
		case engine.Bishop:
			a = engine.BishopAttacks(s, t.occ)
		case engine.Rook:
			a = engine.RookAttacks(s, t.occ)
			e.rookFile(t, c, s)
		default:
			a = engine.QueenAttacks(s, t.occ)
		}
		n := (a & mobArea).Count() - mobBase[pt]
		t.mg[c] += n * w[pw.mobMG]
		t.eg[c] += n * w[pw.mobEG]
		if z := a & t.kingZone[them]; z != 0 {
			t.attackers[them]++
			t.attack[them] += z.Count() * w[pw.kingAttack]
		}
		t.phase += pw.phase
		t.npm[c] += w[pw.material]
	}
}

// rookFile adds the bonus of c's rook on s for an open or half-open file.
func (e *Evaluator) rookFile(t *evalTerms, c engine.Color, s engine.Square) {
	file := fileMask[s.File()]
	if file&t.pawns[c] != 0 {
		return
	}
	if file&t.pawns[c^1] == 0 {
		t.mg[c] += e.w[RookOpenMG]
		t.eg[c] += e.w[RookOpenEG]
	} else {
		t.mg[c] += e.w[RookSemiOpenMG]
		t.eg[c] += e.w[RookSemiOpenEG]
	}
}

// kingSafety: quadratic in the attack units, so that one attacker is
// nearly harmless and a coordinated attack weighs heavily. Only counted
// with two attackers, as a lone piece near the king rarely mates.
func (e *Evaluator) kingSafety(t *evalTerms) {
	for c := engine.White; c <= engine.Black; c++ {
		if t.attackers[c] >= 2 {
			u := t.attack[c]
			t.mg[c] -= min(u*u*e.w[KingSafetyScale]/64, 600)
		}
	}
}

// scale blends the middlegame and endgame sums by the phase (White's
// point of view), and scales drawish material down: the stronger side
// without pawns and at most a minor piece ahead cannot usually win (KNK,
// KBK, KRKB, KNNK...).
func (e *Evaluator) scale(t *evalTerms) int {
	phase := min(t.phase, 24)
	mgScore := t.mg[engine.White] - t.mg[engine.Black]
	egScore := t.eg[engine.White] - t.eg[engine.Black]
	score := (mgScore*phase + egScore*(24-phase)) / 24
	strong := engine.White
	if score < 0 {
		strong = engine.Black
	}
	if t.pawns[strong] == 0 && t.npm[strong]-t.npm[strong^1] <= e.w[BishopMG] {
		score /= 8
	}
	return score
}

// shield is the middlegame bonus for pawns in front of a king that stands on
// its back two ranks away from the centre files (a castled king).
func (e *Evaluator) shield(ks engine.Square, c engine.Color, pawns engine.Bitboard) int {
	f, r := ks.File(), ks.Rank()
	if c == engine.Black {
		r = 7 - r
	}
	if r > 1 || (f >= 3 && f <= 4) {
		return 0
	}
	files := fileMask[f] | adjacentMask[f]
	var near, far engine.Bitboard
	if c == engine.White {
		near = rank1 << (8 * (ks.Rank() + 1))
		far = near << 8
	} else {
		near = rank1 << (8 * (ks.Rank() - 1))
		far = near >> 8
	}
	n := (pawns & files & near).Count()
	fr := (pawns & files & far).Count()
	return n*e.w[ShieldNearMG] + fr*e.w[ShieldFarMG]
}
