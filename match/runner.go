package match

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbiter-chess/arbiter/sprt"
)

// Runner invariants:
//   - Engine 0 ("A", the engine under test) and engine 1 ("B", the
//     baseline) play every opening twice: A white in the pair's first game,
//     B white in the second. Pentanomial and W/D/L counts are from A's side.
//   - Each concurrent slot owns one process of each engine for the whole
//     match (reused with ucinewgame/new); slots share nothing but the pair
//     counter and the results channel.
//   - Results are folded, written as PGN and passed to OnPair by the
//     goroutine that called Run, one pair at a time in completion order.
//   - A pair that the match stopped before it finished is not counted.

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
	Results    sprt.Results // A's W/D/L and pentanomial
	Pairs      int
	Games      int
	Incidents  []Incident
	TimeLosses int
	Crashes    int
	Hangs      int
	Illegal    int
	Overruns   int
	MaxOverrun time.Duration
	// Terminations counts finished games by Reason ("White mates", ...).
	Terminations map[string]int
	Elapsed      time.Duration
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
	var lim [2]Limits
	for i, e := range cfg.Engines {
		lim[i] = cfg.Limits
		if e.Limits != (Limits{}) {
			lim[i] = e.Limits
		}
		if err := lim[i].Validate(); err != nil {
			return nil, fmt.Errorf("engine %q: %w", e.Name, err)
		}
	}
	if cfg.Engines[0].Name == cfg.Engines[1].Name {
		return nil, fmt.Errorf("both engines are named %q: give them different names", cfg.Engines[0].Name)
	}

	// Start every slot's players before the first game, so that a bad engine
	// or option is an error now, not an incident in every game.
	players := make([][2]Player, conc)
	quitAll := func() {
		var wg sync.WaitGroup
		for _, ps := range players {
			for _, p := range ps {
				if p != nil {
					wg.Add(1)
					go func() { defer wg.Done(); p.Quit() }()
				}
			}
		}
		wg.Wait()
	}
	defer quitAll()
	{
		var wg sync.WaitGroup
		errs := make([]error, 2*conc)
		for s := range players {
			for e := 0; e < 2; e++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, err := newPlayer(cfg.Engines[e])
					if err != nil {
						errs[2*s+e] = err
						return
					}
					players[s][e] = p
				}()
			}
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, firstError(errs)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	next.Store(int64(cfg.FirstPair))
	results := make(chan *PairResult, conc)
	var wg sync.WaitGroup
	for s := 0; s < conc; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &gameState{}
			a, b := players[s][0], players[s][1]
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if cfg.Pairs > 0 && i >= cfg.FirstPair+cfg.Pairs {
					return
				}
				op := cfg.Openings(i)
				pr := &PairResult{Index: i, Opening: op}
				pr.Games[0] = st.play(ctx, [2]Player{a, b}, [2]Limits{lim[0], lim[1]}, op, &cfg.Game)
				if pr.Games[0].Result == NoResult {
					return
				}
				pr.Games[1] = st.play(ctx, [2]Player{b, a}, [2]Limits{lim[1], lim[0]}, op, &cfg.Game)
				if pr.Games[1].Result == NoResult {
					return
				}
				for k, g := range pr.Games {
					g.Round = strconv.Itoa(i+1) + "." + strconv.Itoa(k+1)
				}
				pr.Score = int(outcomeFor(pr.Games[0], true)) + int(outcomeFor(pr.Games[1], false))
				results <- pr
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()

	t := &Totals{Terminations: map[string]int{}}
	start := time.Now()
	var pgn *bufio.Writer
	if cfg.PGN != nil {
		pgn = bufio.NewWriterSize(cfg.PGN, 64<<10)
	}
	stopped := false
	for pr := range results {
		if stopped {
			continue // drained: the slots finish their current game and exit
		}
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

func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// add folds one pair into the totals.
func (t *Totals) add(pr *PairResult) {
	t.Results.AddPair(outcomeFor(pr.Games[0], true), outcomeFor(pr.Games[1], false))
	t.Pairs++
	for _, g := range pr.Games {
		t.Games++
		t.Terminations[g.Reason]++
		for _, inc := range g.Incidents {
			t.Incidents = append(t.Incidents, inc)
			switch inc.Kind {
			case IncTimeLoss:
				t.TimeLosses++
			case IncCrash:
				t.Crashes++
			case IncHang:
				t.Hangs++
			case IncIllegal:
				t.Illegal++
			case IncOverrun:
				t.Overruns++
				t.MaxOverrun = max(t.MaxOverrun, inc.Over)
			}
		}
	}
}

// PlayPairs is the cluster worker's entry point: play the given openings as
// game pairs (A white first, then B white) and return the totals with every
// game record. Engine failures are incidents; err only when the engines
// cannot start.
func PlayPairs(ctx context.Context, cfg MatchConfig, openings []Opening) (*Totals, []*PairResult, error) {
	if len(openings) == 0 {
		return &Totals{Terminations: map[string]int{}}, nil, nil
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
