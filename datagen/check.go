package datagen

import (
	"fmt"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
)

// CheckBatch checks games (decoded by DecodeShard, so legal and ended as
// their final positions say) against what the batch must be: the
// batch's settings and seed decide every game's opening, and the
// adjudication decides where a game that did not end by the rules ended.
// It refuses, naming the game and ply: an opening (start position or
// random plies) other than the seed's, and a game that goes on after an
// adjudication should have ended it, or stops where none does. What it
// cannot check is the engine's moves and scores themselves.
func CheckBatch(s Settings, seed uint64, games []Game) error {
	if err := s.validate(false); err != nil {
		return err
	}
	var r replay
	for i := range games {
		g := &games[i]
		start, random, err := randomOpening(&r, s, seed, uint64(i))
		if err != nil {
			return fmt.Errorf("game %d: %v", i, err)
		}
		if g.StartFEN != start {
			return fmt.Errorf("game %d: starts from %q, the seed gives %q", i, g.StartFEN, start)
		}
		if len(g.Moves) < len(random) {
			return fmt.Errorf("game %d: %d plies, the opening alone has %d", i, len(g.Moves), len(random))
		}
		for k, uci := range random {
			if m := g.Moves[k]; !m.Random || m.UCI != uci {
				return fmt.Errorf("game %d: ply %d: %s, the seed's random ply is %s", i, k, m.UCI, uci)
			}
		}
		if len(g.Moves) > len(random) && g.Moves[len(random)].Random {
			return fmt.Errorf("game %d: ply %d: a random ply past the seed's %d", i, len(random), len(random))
		}
		if err := checkAdjudication(s, g, len(random)); err != nil {
			return fmt.Errorf("game %d: %v", i, err)
		}
	}
	return nil
}

// checkAdjudication replays the game loop's adjudication (match.PlayGame)
// over the engine plies of g, which start at ply first.
func checkAdjudication(s Settings, g *Game, first int) error {
	judge := match.NewAdjudicator(s.Adjudication.match())
	last := len(g.Moves) - 1
	for i := first; i <= last; i++ {
		// Scores are White's. The rules are symmetric (a score s of the
		// mover is -s of its opponent), so each ply is judged as White's.
		end, res := TermNone, NoResult
		switch rule, r := judge.Ply(engine.White, g.Moves[i].Score, true); rule {
		case match.AdjudicationResign:
			end, res = TermWinAdjudication, resultOfMatch(r)
		case match.AdjudicationDraw:
			end, res = TermDrawAdjudication, Draw
		case match.AdjudicationMaxMoves:
			end, res = TermMaxMoves, Draw
		}
		switch {
		case end != TermNone && i < last:
			return fmt.Errorf("ply %d: the game goes on after %s ended it", i, end)
		case i < last:
		case g.Termination.ByRules():
			// The final position ends it (DecodeShard checked), whatever
			// adjudication says of the same move.
		case g.Termination == TermTablebase:
			// The tables come before the scores at the same move; shard
			// decoding checked the position is one the rule probes.
			if s.Tablebase.Pieces == 0 {
				return fmt.Errorf("ply %d: a tablebase adjudication, but the dataset asks for none", i)
			}
		case g.Termination == TermResign:
			if end != TermNone {
				return fmt.Errorf("ply %d: a resignation where %s ends the game", i, end)
			}
		case end != g.Termination || res != g.Result:
			return fmt.Errorf("ply %d: the game ends by %s (%s), the adjudication gives %s (%s)", i, g.Termination, g.Result, end, res)
		}
	}
	if last < first && !g.Termination.ByRules() {
		return fmt.Errorf("no engine ply, and the game ends by %s", g.Termination)
	}
	return nil
}

// CheckOpenings draws the openings of the first games of the batch whose
// seed is seed, as PlayGames would, so that random plies that find no
// playable position (every draw ends the game) are refused when a dataset
// is submitted rather than when a worker plays it. A book whose bad
// positions are drawn only later is still found by the workers.
func CheckOpenings(s Settings, seed uint64, games int) error {
	if err := s.validate(false); err != nil {
		return err
	}
	var r replay
	for i := range min(games, MaxBatchGames) {
		if _, _, err := randomOpening(&r, s, seed, uint64(i)); err != nil {
			return err
		}
	}
	return nil
}
