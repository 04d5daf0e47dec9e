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

// Evaluate returns the score of p in centipawns from the side to move's
// point of view. It allocates nothing.
func (e *Evaluator) Evaluate(p *engine.Position) int {
	w := &e.w
	var mg, eg [2]int
	phase := 0
	occ := p.Occupied()
	pawns := [2]engine.Bitboard{p.Pieces(engine.White, engine.Pawn), p.Pieces(engine.Black, engine.Pawn)}
	pawnAtt := [2]engine.Bitboard{pawnAttacksAll(pawns[0], engine.White), pawnAttacksAll(pawns[1], engine.Black)}
	kingZone := [2]engine.Bitboard{
		engine.KingAttacks(p.KingSquare(engine.White)) | p.KingSquare(engine.White).Bit(),
		engine.KingAttacks(p.KingSquare(engine.Black)) | p.KingSquare(engine.Black).Bit(),
	}
	var attackUnits, attackers [2]int // against c's king
	npm := [2]int{}                   // non-pawn material (middlegame values) for scaling

	for c := engine.White; c <= engine.Black; c++ {
		them := c ^ 1
		own := p.ColorPieces(c)
		mobArea := ^own &^ pawnAtt[them]
		psqMG, psqEG := &e.psqMG[c], &e.psqEG[c]

		for b := pawns[c]; b != 0; {
			s := pop(&b)
			mg[c] += int(psqMG[engine.Pawn][s])
			eg[c] += int(psqEG[engine.Pawn][s])
			f := s.File()
			if frontMask[c][s]&pawns[c] != 0 {
				mg[c] -= w[DoubledMG]
				eg[c] -= w[DoubledEG]
			}
			if adjacentMask[f]&pawns[c] == 0 {
				mg[c] -= w[IsolatedMG]
				eg[c] -= w[IsolatedEG]
			}
			if passedMask[c][s]&pawns[them] == 0 && frontMask[c][s]&pawns[c] == 0 {
				r := s.Rank()
				if c == engine.Black {
					r = 7 - r
				}
				if r >= 1 && r <= 6 {
					i := Passed2MG + 2*(r-1)
					mg[c] += w[i]
					eg[c] += w[i+1]
				}
			}
		}

		for b := p.Pieces(c, engine.Knight); b != 0; {
			s := pop(&b)
			mg[c] += int(psqMG[engine.Knight][s])
			eg[c] += int(psqEG[engine.Knight][s])
			a := engine.KnightAttacks(s)
			n := (a & mobArea).Count() - mobBase[engine.Knight]
			mg[c] += n * w[MobKnightMG]
			eg[c] += n * w[MobKnightEG]
			if z := a & kingZone[them]; z != 0 {
				attackers[them]++
				attackUnits[them] += z.Count() * w[KingAttackKnight]
			}
			phase++
			npm[c] += w[KnightMG]
		}
		bishops := p.Pieces(c, engine.Bishop)
		if bishops.More() {
			mg[c] += w[BishopPairMG]
			eg[c] += w[BishopPairEG]
		}
		for b := bishops; b != 0; {
			s := pop(&b)
			mg[c] += int(psqMG[engine.Bishop][s])
			eg[c] += int(psqEG[engine.Bishop][s])
			a := engine.BishopAttacks(s, occ)
			n := (a & mobArea).Count() - mobBase[engine.Bishop]
			mg[c] += n * w[MobBishopMG]
			eg[c] += n * w[MobBishopEG]
			if z := a & kingZone[them]; z != 0 {
				attackers[them]++
				attackUnits[them] += z.Count() * w[KingAttackBishop]
			}
			phase++
			npm[c] += w[BishopMG]
		}
		for b := p.Pieces(c, engine.Rook); b != 0; {
			s := pop(&b)
			mg[c] += int(psqMG[engine.Rook][s])
			eg[c] += int(psqEG[engine.Rook][s])
			a := engine.RookAttacks(s, occ)
			n := (a & mobArea).Count() - mobBase[engine.Rook]
			mg[c] += n * w[MobRookMG]
			eg[c] += n * w[MobRookEG]
			if z := a & kingZone[them]; z != 0 {
				attackers[them]++
				attackUnits[them] += z.Count() * w[KingAttackRook]
			}
			file := fileMask[s.File()]
			if file&pawns[c] == 0 {
				if file&pawns[them] == 0 {
					mg[c] += w[RookOpenMG]
					eg[c] += w[RookOpenEG]
				} else {
					mg[c] += w[RookSemiOpenMG]
					eg[c] += w[RookSemiOpenEG]
				}
			}
			phase += 2
			npm[c] += w[RookMG]
		}
		for b := p.Pieces(c, engine.Queen); b != 0; {
			s := pop(&b)
			mg[c] += int(psqMG[engine.Queen][s])
			eg[c] += int(psqEG[engine.Queen][s])
			a := engine.QueenAttacks(s, occ)
			n := (a & mobArea).Count() - mobBase[engine.Queen]
			mg[c] += n * w[MobQueenMG]
			eg[c] += n * w[MobQueenEG]
			if z := a & kingZone[them]; z != 0 {
				attackers[them]++
				attackUnits[them] += z.Count() * w[KingAttackQueen]
			}
			phase += 4
			npm[c] += w[QueenMG]
		}

		ks := p.KingSquare(c)
		mg[c] += int(psqMG[engine.King][ks])
		eg[c] += int(psqEG[engine.King][ks])
		mg[c] += e.shield(ks, c, pawns[c])
	}

	// King safety: quadratic in the attack units, so that one attacker is
	// nearly harmless and a coordinated attack weighs heavily. Only counted
	// with two attackers, as a lone piece near the king rarely mates.
	for c := engine.White; c <= engine.Black; c++ {
		if attackers[c] >= 2 {
			u := attackUnits[c]
			pen := u * u * w[KingSafetyScale] / 64
			if pen > 600 {
				pen = 600
			}
			mg[c] -= pen
		}
	}

	us := p.SideToMove()
	mg[us] += w[TempoMG]
	eg[us] += w[TempoEG]

	if phase > 24 {
		phase = 24
	}
	mgScore := mg[engine.White] - mg[engine.Black]
	egScore := eg[engine.White] - eg[engine.Black]
	score := (mgScore*phase + egScore*(24-phase)) / 24

	// Drawish material: the stronger side without pawns and at most a minor
	// piece ahead cannot usually win (KNK, KBK, KRKB, KNNK...).
	strong := engine.White
	if score < 0 {
		strong = engine.Black
	}
	if pawns[strong] == 0 && npm[strong]-npm[strong^1] <= w[BishopMG] {
		score /= 8
	}

	if us == engine.Black {
		score = -score
	}
	if score > MaxEval {
		score = MaxEval
	} else if score < -MaxEval {
		score = -MaxEval
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
