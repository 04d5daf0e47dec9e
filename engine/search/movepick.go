package search

import "github.com/arbiter-chess/arbiter/engine"

// Move ordering. The generator is strictly legal and cheap, so a node
// generates everything once and picks moves by score (selection sort: most
// nodes cut off after one or two moves, so sorting all would waste time).
//
// Order: TT move; winning and equal captures and queen promotions by
// MVV-LVA; killers; quiet moves by history; losing captures; under-promotions.
const (
	scoreTT        = 1 << 30
	scoreGoodCapt  = 1 << 28
	scoreKiller    = 1 << 27
	scoreBadCapt   = -(1 << 22)
	scoreUnderProm = -(1 << 24)
	historyMax     = 16384
)

// mvvLva ranks captures: most valuable victim first, then least valuable
// attacker.
func mvvLva(victim, attacker engine.PieceType) int32 {
	return int32(seeValue[victim])*8 - int32(attacker)
}

// scoreMoves fills scores for every move of ml.
func (w *worker) scoreMoves(p *engine.Position, ml *engine.MoveList, scores *[256]int32, ttMove engine.Move, ply int) {
	us := p.SideToMove()
	k0, k1 := w.killers[ply][0], w.killers[ply][1]
	for i := 0; i < ml.N; i++ {
		m := ml.Moves[i]
		var s int32
		switch {
		case m == ttMove:
			s = scoreTT
		case m.IsPromotion() && m.Promotion() != engine.Queen:
			s = scoreUnderProm
		case p.IsCapture(m) || m.IsPromotion():
			victim := capturedType(p, m)
			attacker := p.PieceAt(m.From()).Type()
			s = mvvLva(victim, attacker)
			if m.IsPromotion() {
				s += int32(seeValue[engine.Queen]) * 8
			}
			if seeValue[victim] >= seeValue[attacker] || seeGE(p, m, 0) {
				s += scoreGoodCapt
			} else {
				s += scoreBadCapt
			}
		case m == k0:
			s = scoreKiller
		case m == k1:
			s = scoreKiller - 1
		default:
			s = w.history[us][m.From()][m.To()]
		}
		scores[i] = s
	}
}

// scoreCaptures scores the captures and queen promotions for quiescence by
// MVV-LVA and drops everything else (scored -inf, skipped by the caller).
func scoreCaptures(p *engine.Position, ml *engine.MoveList, scores *[256]int32) {
	n := 0
	for i := 0; i < ml.N; i++ {
		m := ml.Moves[i]
		promo := m.IsPromotion() && m.Promotion() == engine.Queen
		if !promo && !p.IsCapture(m) {
			continue
		}
		s := mvvLva(capturedType(p, m), p.PieceAt(m.From()).Type())
		if promo {
			s += int32(seeValue[engine.Queen]) * 8
		}
		ml.Moves[n], scores[n] = m, s
		n++
	}
	ml.N = n
}

// pickNext swaps the best-scored move of ml[i:] to i and returns it.
func pickNext(ml *engine.MoveList, scores *[256]int32, i int) engine.Move {
	best := i
	for j := i + 1; j < ml.N; j++ {
		if scores[j] > scores[best] {
			best = j
		}
	}
	ml.Moves[i], ml.Moves[best] = ml.Moves[best], ml.Moves[i]
	scores[i], scores[best] = scores[best], scores[i]
	return ml.Moves[i]
}

// updateHistory applies the "gravity" formula: the bonus shrinks as the
// value nears ±historyMax, so the table never saturates.
func updateHistory(h *int32, bonus int) {
	*h += int32(bonus - int(*h)*abs(bonus)/historyMax)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// onCutoff rewards the quiet move that caused a beta cut-off and punishes
// the quiet moves tried before it.
func (w *worker) onCutoff(p *engine.Position, m engine.Move, quiets []engine.Move, depth, ply int) {
	if w.killers[ply][0] != m {
		w.killers[ply][1] = w.killers[ply][0]
		w.killers[ply][0] = m
	}
	us := p.SideToMove()
	bonus := min(depth*depth*16, 1600)
	updateHistory(&w.history[us][m.From()][m.To()], bonus)
	for _, q := range quiets {
		updateHistory(&w.history[us][q.From()][q.To()], -bonus)
	}
}
