package datagen

import (
	"fmt"
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
		if err := checkAdjudication(s.Adjudication, g, len(random)); err != nil {
			return fmt.Errorf("game %d: %v", i, err)
		}
	}
	return nil
}

// checkAdjudication replays the game loop's adjudication (match.PlayGame)
// over the engine plies of g, which start at ply first.
func checkAdjudication(a Adjudication, g *Game, first int) error {
	var (
		winStreak   [2]int // consecutive plies in which White (0) or Black (1) was judged lost
		drawStreak  int
		enginePlies int
	)
	last := len(g.Moves) - 1
	for i := first; i <= last; i++ {
		w := g.Moves[i].Score
		enginePlies++
		end := TermNone
		var res Result
		if a.WinMoves > 0 {
			lost := -1
			switch {
			case w <= -a.WinScore:
				lost = 0
			case w >= a.WinScore:
				lost = 1
			}
			for k := range winStreak {
				if k == lost {
					winStreak[k]++
				} else {
					winStreak[k] = 0
				}
			}
			if lost >= 0 && winStreak[lost] >= 2*a.WinMoves {
				end, res = TermWinAdjudication, [2]Result{BlackWins, WhiteWins}[lost]
			}
		}
		if end == TermNone && a.DrawMoves > 0 {
			if abs(w) <= a.DrawScore && (enginePlies+1)/2 >= a.DrawMoveNumber {
				drawStreak++
			} else {
				drawStreak = 0
			}
			if drawStreak >= 2*a.DrawMoves {
				end, res = TermDrawAdjudication, Draw
			}
		}
		if end == TermNone && enginePlies >= 2*a.MaxMoves {
			end, res = TermMaxMoves, Draw
		}
		switch {
		case end != TermNone && i < last:
			return fmt.Errorf("ply %d: the game goes on after %s ended it", i, end)
		case i < last:
		case g.Termination.ByRules():
			// The final position ends it (DecodeShard checked), whatever
			// adjudication says of the same move.
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

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
