package nnue

import (
	"math/bits"

	"github.com/arbiter-chess/arbiter/engine"
)

// Accumulator is the hidden layer before activation, one half per
// perspective (indexed by engine.White and engine.Black): the feature
// biases plus the weights of every piece on the board as that side sees it.
type Accumulator struct {
	V [2][HiddenSize]int16
}

// FeatureIndex is the input of piece pc on s from perspective's point of
// view (bullet's Chess768).
func FeatureIndex(perspective engine.Color, pc engine.Piece, s engine.Square) int {
	f := 64*(int(pc.Type())-1) + int(s)
	if perspective == engine.Black {
		f ^= 56
	}
	if pc.Color() != perspective {
		f += 384
	}
	return f
}

// Refresh computes a from scratch for p.
func (n *Net) Refresh(a *Accumulator, p *engine.Position) {
	a.V[engine.White] = n.FeatureBias
	a.V[engine.Black] = n.FeatureBias
	for b := p.Occupied(); b != 0; b &= b - 1 {
		s := engine.Square(bits.TrailingZeros64(uint64(b)))
		pc := p.PieceAt(s)
		add(&a.V[engine.White], &n.FeatureWeights[FeatureIndex(engine.White, pc, s)])
		add(&a.V[engine.Black], &n.FeatureWeights[FeatureIndex(engine.Black, pc, s)])
	}
}

// change is one piece put on or taken off a square.
type change struct {
	pc engine.Piece
	s  engine.Square
}

// maxChanges bounds the pieces one move adds or removes (castling: two of
// each; a capturing promotion removes two).
const maxChanges = 2

// Update sets dst to the accumulator of child from src, parent's, where
// child is parent after one move or a null move. It compares the two
// placements instead of interpreting the move, so every kind of move
// (castling in Chess960 included) is handled the same way; a difference too
// large for one move (a caller's mistake) falls back to a full refresh.
func (n *Net) Update(dst, src *Accumulator, parent, child *engine.Position) {
	// The squares whose piece changed: a colour or a type bitboard differs
	// there (a Chess960 castling king may land where its own rook stood, so
	// the colours alone are not enough).
	diff := (parent.ColorPieces(engine.White) ^ child.ColorPieces(engine.White)) |
		(parent.ColorPieces(engine.Black) ^ child.ColorPieces(engine.Black))
	for t := engine.Pawn; t <= engine.King; t++ {
		diff |= parent.TypePieces(t) ^ child.TypePieces(t)
	}
	var added, removed [maxChanges]change
	na, nr := 0, 0
	for b := diff; b != 0; b &= b - 1 {
		s := engine.Square(bits.TrailingZeros64(uint64(b)))
		if pc := parent.PieceAt(s); pc != engine.NoPiece {
			if nr == maxChanges {
				n.Refresh(dst, child)
				return
			}
			removed[nr] = change{pc, s}
			nr++
		}
		if pc := child.PieceAt(s); pc != engine.NoPiece {
			if na == maxChanges {
				n.Refresh(dst, child)
				return
			}
			added[na] = change{pc, s}
			na++
		}
	}
	w := &n.FeatureWeights
	for persp := engine.White; persp <= engine.Black; persp++ {
		d, s := &dst.V[persp], &src.V[persp]
		switch {
		case na == 1 && nr == 1: // a quiet move
			addSub(d, s, &w[FeatureIndex(persp, added[0].pc, added[0].s)], &w[FeatureIndex(persp, removed[0].pc, removed[0].s)])
		case na == 1 && nr == 2: // a capture
			addSubSub(d, s, &w[FeatureIndex(persp, added[0].pc, added[0].s)],
				&w[FeatureIndex(persp, removed[0].pc, removed[0].s)], &w[FeatureIndex(persp, removed[1].pc, removed[1].s)])
		default: // castling, a null move, or anything else
			*d = *s
			for _, ch := range added[:na] {
				add(d, &w[FeatureIndex(persp, ch.pc, ch.s)])
			}
			for _, ch := range removed[:nr] {
				sub(d, &w[FeatureIndex(persp, ch.pc, ch.s)])
			}
		}
	}
}

// Evaluate returns the net's score of the position whose accumulator is a,
// in centipawns from the side to move's point of view, as bullet's
// reference inference computes it.
func (n *Net) Evaluate(a *Accumulator, stm engine.Color) int {
	sum := screluDot(&a.V[stm], (*[HiddenSize]int16)(n.OutputWeights[:HiddenSize])) +
		screluDot(&a.V[stm^1], (*[HiddenSize]int16)(n.OutputWeights[HiddenSize:]))
	out := sum/QA + int64(n.OutputBias)
	return int(out * Scale / (QA * QB))
}

// EvaluatePosition refreshes an accumulator for p and evaluates it (tests,
// tools; the search updates incrementally).
func (n *Net) EvaluatePosition(p *engine.Position) int {
	var a Accumulator
	n.Refresh(&a, p)
	return n.Evaluate(&a, p.SideToMove())
}
