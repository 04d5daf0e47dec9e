package datagen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
)

// openingTries bounds how many random openings are drawn for one game
// before PlayGames gives up: a draw is refused when the random plies end
// the game (a mate, a stalemate, a repetition within the plies), which is
// rare from ordinary positions and certain from a few.
const openingTries = 100

// MaxBatchGames bounds PlayGames' games argument.
const MaxBatchGames = 1_000_000

// PlayGames plays games self-play games of one engine (both sides the same
// player, made once by newPlayer and quit at the end) under s, game i
// from the opening that (seed, i) draws. The openings depend on the seed
// and s only; an engine that searches deterministically at fixed nodes
// (the embedded engine) gives the same games for the same seed.
//
// It fails, naming the engine and the ply, on what makes the data
// unusable: an engine that reports no score, one that searches far more
// nodes than the limit (it ignores `go nodes`), one that crashes, hangs or
// plays an illegal move, and random plies that find no playable position.
// A cancelled ctx returns ctx's error. PlayGames checks s as Validate does
// but parses only the openings it draws: Validate the settings once, when
// the dataset is submitted.
func PlayGames(ctx context.Context, newPlayer func() (match.Player, error), s Settings, seed uint64, games int) ([]Game, error) {
	if err := s.validate(false); err != nil {
		return nil, err
	}
	if games < 0 || games > MaxBatchGames {
		return nil, fmt.Errorf("games: %d: must be between 0 and %d", games, MaxBatchGames)
	}
	p, err := newPlayer()
	if err != nil {
		return nil, err
	}
	defer p.Quit()
	sp := &selfPlayer{Player: p}

	lim := match.Limits{Nodes: int64(s.Nodes)}
	tb, err := s.Tablebase.adjudication()
	if err != nil {
		return nil, err
	}
	cfg := match.GameConfig{Adjudication: s.Adjudication.match(), Tablebase: tb}
	out := make([]Game, 0, min(games, 1024))
	var r replay
	for i := 0; i < games; i++ {
		start, moves, err := randomOpening(&r, s, seed, uint64(i))
		if err != nil {
			return nil, fmt.Errorf("game %d: %w", i, err)
		}
		sp.started = false
		rec := match.PlayGame(ctx, sp, sp, lim, lim, match.Opening{ID: i, FEN: start, Moves: moves}, cfg)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		g, err := gameOf(rec, p.Name(), s, &r)
		if err != nil {
			return nil, fmt.Errorf("game %d: %w", i, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// selfPlayer is one player on both sides of a game: the game loop starts
// each side's game, and a second NewGame would only clear the engine's
// hash again.
type selfPlayer struct {
	match.Player
	started bool
}

func (s *selfPlayer) NewGame(ctx context.Context, chess960 bool) error {
	if s.started {
		return nil
	}
	s.started = true
	return s.Player.NewGame(ctx, chess960)
}

// randomOpening draws game (seed, game)'s opening: a start position and
// random legal plies from it, none of which ends the game. The stream is
// PCG seeded by (seed, game): a game's opening depends on nothing else
// (not on the batch size, not on the other games).
func randomOpening(r *replay, s Settings, seed, game uint64) (string, []string, error) {
	rng := rand.New(rand.NewPCG(seed, game))
	var moves []string
	var lastFEN string
	for try := 0; try < openingTries; try++ {
		start := engine.StartPosition()
		if len(s.Openings) > 0 {
			i := rng.IntN(len(s.Openings))
			var err error
			if start, err = openingPosition(s.Openings[i]); err != nil {
				return "", nil, fmt.Errorf("openings: position %d: %v", i+1, err)
			}
		}
		lastFEN = start.FEN()
		n := s.RandomPliesMin + rng.IntN(s.RandomPliesMax-s.RandomPliesMin+1)
		r.reset(start)
		moves = moves[:0]
		ok := true
		for k := 0; k < n; k++ {
			legal := r.pos.LegalMoves()
			m := legal[rng.IntN(len(legal))]
			moves = append(moves, r.pos.UCIMove(m))
			r.push(m)
			if _, t := r.status(); t != TermNone {
				ok = false
				break
			}
		}
		if ok {
			return start.FEN(), moves, nil
		}
	}
	return "", nil, fmt.Errorf("random-plies: %d draws of %d-%d random plies from %s all ended the game: no playable position",
		openingTries, s.RandomPliesMin, s.RandomPliesMax, lastFEN)
}

// nodesSlack is how far past the node limit a search may report before
// the engine is said to ignore it: engines check the limit every few
// hundred nodes, some count a little differently, and most finish their
// first iteration, or at least its first root move, whatever the limit
// (the embedded engine cuts depth 1 at twice the limit, at least the
// limit and 1,000; its first root move took 1,839 nodes in one position
// at nodes=500). An engine that ignores the limit searches far beyond.
func nodesSlack(limit int) int64 { return int64(max(3*limit, limit+3000)) }

// gameOf turns a finished game of the match loop into a Game, refusing a
// game the data cannot use. r is scratch space.
func gameOf(rec *match.GameRecord, name string, s Settings, r *replay) (Game, error) {
	for _, inc := range rec.Incidents {
		if inc.Kind != match.IncRestart {
			return Game{}, fmt.Errorf("engine %q: %s", name, inc)
		}
	}
	g := Game{StartFEN: rec.StartFEN, Result: resultOfMatch(rec.Result), Moves: make([]Move, len(rec.Moves))}
	switch rec.End {
	case match.EndCheckmate, match.EndStalemate, match.EndRepetition, match.EndFiftyMoves, match.EndInsufficientMaterial:
		g.Termination = termOfEnd(rec.End)
	case match.EndAdjudication:
		switch {
		case match.IsTBReason(rec.Reason):
			g.Termination = TermTablebase
		case g.Result != Draw:
			g.Termination = TermWinAdjudication
		case rec.Reason == "draw by adjudication":
			g.Termination = TermDrawAdjudication
		default:
			g.Termination = TermMaxMoves
		}
	case match.EndResign:
		g.Termination = TermResign
	default:
		return Game{}, fmt.Errorf("engine %q: the game ended abnormally (%s): %s", name, rec.End, rec.Reason)
	}
	pos, err := engine.ParseFEN(rec.StartFEN)
	if err != nil {
		return Game{}, err
	}
	r.reset(pos)
	for i, m := range rec.Moves {
		mv := &g.Moves[i]
		mv.UCI = r.pos.UCIMove(m)
		if i < rec.BookPlies {
			mv.Random = true
		} else {
			inf := rec.Info[i]
			if !inf.HasScore {
				return Game{}, fmt.Errorf("engine %q reported no score at ply %d (%s): datagen needs a score for every position", name, i, r.pos.FEN())
			}
			if inf.Nodes > nodesSlack(s.Nodes) {
				return Game{}, fmt.Errorf("engine %q searched %d nodes at ply %d with a limit of %d: it ignores the node limit (go nodes); position %s", name, inf.Nodes, i, s.Nodes, r.pos.FEN())
			}
			mv.Score = whiteScore(inf.Score, r.pos.SideToMove())
			mv.Depth = max(0, min(inf.Depth, maxDepth))
		}
		r.push(m)
	}
	// The loop adjudicates after a move before it looks at the rules: a
	// move that mates or stalemates and completes a streak ends the game
	// by the rules, whose result stands.
	if res, t := r.status(); t != TermNone {
		g.Result, g.Termination = res, t
	}
	if g.Result == NoResult {
		return Game{}, fmt.Errorf("engine %q: the game has no result (%s)", name, strings.TrimSpace(rec.Reason))
	}
	return g, nil
}

// maxDepth bounds a reported depth (a shard stores it in one byte).
const maxDepth = 255

// BatchSeed is the seed of batch number batch of a dataset whose seed is
// seed (`--random-seed`): the coordinator and `arbiter datagen` number
// batches the same way, so that a dataset is the same wherever its
// batches run. SplitMix64 of the pair: neighbouring batches get unrelated
// seeds.
func BatchSeed(seed, batch uint64) uint64 {
	z := seed ^ (batch+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
