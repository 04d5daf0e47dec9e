package match

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/sprt"
)

// Run invariants:
//   - Engine 0 ("A", the engine under test) and engine 1 ("B", the
//     baseline) play every opening twice: A white in the pair's first game,
//     B white in the second. Pentanomial and W/D/L counts are from A's side.
//   - The pairs are units of the game slots (slots.go): each concurrent
//     slot owns one process of each engine for the whole match (reused
//     with ucinewgame/new); slots share nothing but the pair counter and
//     the results channel.
//   - Results are folded, written as PGN and passed to OnPair by the
//     goroutine that called Run, one pair at a time in completion order.
//   - A pair that the match stopped before it finished is not counted.
//   - A dead engine is restarted for the next game (and the restart is an
//     incident): a cluster batch always plays all its pairs.

// MatchConfig is a match or SPRT between two engines.
type MatchConfig struct {
	Engines [2]EngineConfig // [0] = A (under test), [1] = B (baseline)
	Limits  Limits          // for both, unless an engine has its own Limits
	Game    GameConfig

	// Openings gives the opening of pair i (a Book's At, for instance).
	Openings func(i int) Opening
	// FirstPair is the index of the first pair to play; pairs are numbered
	// from it and Round tags follow (a worker's unit can start anywhere).
	FirstPair int
	// Pairs to play; 0 = until OnPair returns true (SPRT) or ctx ends.
	Pairs int
	// Concurrency is the number of game pairs played at once (default 1).
	Concurrency int

	// PGN, if set, receives every finished game.
	PGN        io.Writer
	PGNOptions PGNOptions

	// OnPair is called after every counted pair with the totals so far;
	// returning true stops the match (games in flight are abandoned).
	OnPair func(p *PairResult, t *Totals) (stop bool)

	// Builtin makes the players of engines with Proto "builtin" (the
	// embedded engine: match/builtin.New); nil refuses them.
	Builtin BuiltinFactory

	// NewPlayer creates players; nil = the package's NewPlayer with
	// Builtin. Tests can inject in-process players here.
	NewPlayer func(EngineConfig) (Player, error)
}

// PairResult is one opening played with colours swapped.
type PairResult struct {
	Index   int
	Opening Opening
	Games   [2]*GameRecord // [0]: A white, [1]: B white
	// Score is A's points in the pair in half points, 0..4 (the pentanomial index).
	Score int
}

// Totals are a match's counts so far.
type Totals struct {
	Results sprt.Results // A's W/D/L and pentanomial
	Pairs   int
	Tally
}

// Outcome of a game for the named player.
func outcomeFor(g *GameRecord, aWhite bool) sprt.Outcome {
	switch {
	case g.Result == Draw:
		return sprt.Draw
	case (g.Result == WhiteWins) == aWhite:
		return sprt.Win
	}
	return sprt.Loss
}

// effectiveLimits are each engine's limits: its own when it has any, else
// the match's; every one is checked.
func effectiveLimits(engines []EngineConfig, match Limits) ([]Limits, error) {
	lim := make([]Limits, len(engines))
	for i, e := range engines {
		lim[i] = e.LimitsOr(match)
		if err := lim[i].Validate(); err != nil {
			return nil, fmt.Errorf("engine %s: %w", e.label(), err)
		}
	}
	return lim, nil
}

// Run plays the match. It returns the totals and an error only when the
// match could not start (an engine that does not start, a bad option, no
// openings); engine failures during games are incidents in the totals.
func Run(ctx context.Context, cfg MatchConfig) (*Totals, error) {
	if cfg.Openings == nil {
		return nil, errors.New("match: no openings")
	}
	newPlayer := cfg.NewPlayer
	if newPlayer == nil {
		newPlayer = func(e EngineConfig) (Player, error) { return NewPlayer(e, cfg.Builtin) }
	}
	conc := max(cfg.Concurrency, 1)
	if cfg.Pairs > 0 {
		conc = min(conc, cfg.Pairs)
	}
	lim, err := effectiveLimits(cfg.Engines[:], cfg.Limits)
	if err != nil {
		return nil, err
	}
	if cfg.Engines[0].Name == cfg.Engines[1].Name {
		return nil, fmt.Errorf("both engines are named %q: give them different names", cfg.Engines[0].Name)
	}
	l := &lineup{
		configs:   cfg.Engines[:],
		names:     []string{cfg.Engines[0].Name, cfg.Engines[1].Name},
		limits:    lim,
		newPlayer: newPlayer,
		game:      &cfg.Game,
		recover:   true,
	}
	first, err := l.startPlayers()
	if err != nil {
		return nil, err
	}
	n := cfg.Pairs
	if n == 0 {
		n = -1
	}
	if err := checkCapable(first, l.names, lim, demandsOf(cfg.Openings, cfg.FirstPair, n)); err != nil {
		quitPlayers(first)
		return nil, err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	i := cfg.FirstPair
	next := func() (*unit, bool) {
		if cfg.Pairs > 0 && i >= cfg.FirstPair+cfg.Pairs {
			return nil, false
		}
		round := strconv.Itoa(i + 1)
		u := &unit{index: i, opening: cfg.Openings(i), games: []unitGame{
			{index: 2 * i, white: 0, black: 1, round: round + ".1"},
			{index: 2*i + 1, white: 1, black: 0, round: round + ".2"},
		}}
		i++
		return u, true
	}
	results := make(chan *unitResult, conc)
	l.playUnits(ctx, conc, first, next, results)

	t := &Totals{Tally: Tally{Terminations: map[string]int{}}}
	start := time.Now()
	var pgn *bufio.Writer
	if cfg.PGN != nil {
		pgn = bufio.NewWriterSize(cfg.PGN, 64<<10)
	}
	stopped := false
	for ur := range results {
		if stopped {
			continue // drained: the slots finish their current game and exit
		}
		pr := &PairResult{Index: ur.unit.index, Opening: ur.unit.opening, Games: [2]*GameRecord{ur.games[0], ur.games[1]}}
		pr.Score = int(outcomeFor(pr.Games[0], true)) + int(outcomeFor(pr.Games[1], false))
		t.add(pr)
		t.Elapsed = time.Since(start)
		if pgn != nil {
			for _, g := range pr.Games {
				WritePGN(pgn, g, cfg.PGNOptions)
			}
			pgn.Flush()
		}
		if cfg.OnPair != nil && cfg.OnPair(pr, t) {
			stopped = true
			cancel()
		}
	}
	t.Elapsed = time.Since(start)
	return t, nil
}

// add folds one pair into the totals.
func (t *Totals) add(pr *PairResult) {
	t.Results.AddPair(outcomeFor(pr.Games[0], true), outcomeFor(pr.Games[1], false))
	t.Pairs++
	for _, g := range pr.Games {
		t.Tally.add(g)
	}
}

// PlayPairs is the cluster worker's entry point: play the given openings as
// game pairs (A white first, then B white) and return the totals with every
// game record. Engine failures are incidents; err only when the engines
// cannot start.
func PlayPairs(ctx context.Context, cfg MatchConfig, openings []Opening) (*Totals, []*PairResult, error) {
	if len(openings) == 0 {
		return &Totals{Tally: Tally{Terminations: map[string]int{}}}, nil, nil
	}
	cfg.Openings = func(i int) Opening { return openings[i-cfg.FirstPair] }
	cfg.Pairs = len(openings)
	var pairs []*PairResult
	user := cfg.OnPair
	cfg.OnPair = func(p *PairResult, t *Totals) bool {
		pairs = append(pairs, p)
		return user != nil && user(p, t)
	}
	t, err := Run(ctx, cfg)
	return t, pairs, err
}
