package match

import "github.com/arbiter-chess/arbiter/engine"

// RulesEnd is how the rules end a game standing in pos, as the game loop
// judges it before every engine move: checkmate, stalemate, insufficient
// material, the fifty-move rule, threefold repetition, in that order. hist
// holds the positions since the last irreversible move, pos last (the
// loop's own bookkeeping). over is false while the game goes on. A replay
// of a game record (the coordinator's check of a worker's games) uses it
// so that it judges exactly as the game was played.
func RulesEnd(pos *engine.Position, hist []engine.Position) (r Result, e End, over bool) {
	st := gameState{hist: hist}
	r, e, _, _, over = st.status(pos)
	return r, e, over
}

// CanMate reports whether side c could still give mate (FIDE 6.9): what
// decides whether a flag fall loses or draws.
func CanMate(pos *engine.Position, c engine.Color) bool { return canMate(pos, c) }
