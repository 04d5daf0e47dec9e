package epd

import (
	"context"
	"fmt"
	"sync"

	"github.com/arbiter-chess/arbiter/match"
)

// MaxEngines bounds the engines of one run or job.
const MaxEngines = 16

// RunConfig is a local run: every position of Suite searched by every
// engine.
type RunConfig struct {
	Suite   *Suite
	Engines []match.EngineConfig // named (Names makes names unique)
	Limit   Limit
	// Concurrency is how many searches run at once (each with its own
	// engine processes); 0 or less means 1.
	Concurrency int
	Builtin     match.BuiltinFactory
	// OnResult, when set, is called as each search finishes, one call at
	// a time.
	OnResult func(Result)
}

// Run searches every (position, engine) pair, positions in suite order
// and each position by every engine before the next. Each of Concurrency
// searchers starts its own player per engine when it first needs it and
// reuses it for its next positions. The results are in position-major
// order (index position*len(Engines)+engine) whatever the concurrency.
func Run(ctx context.Context, cfg RunConfig) ([]Result, error) {
	if err := cfg.Limit.Validate(); err != nil {
		return nil, err
	}
	if n := len(cfg.Engines); n == 0 || n > MaxEngines {
		return nil, fmt.Errorf("%d engines: want 1 to %d", n, MaxEngines)
	}
	nEng := len(cfg.Engines)
	total := len(cfg.Suite.Positions) * nEng
	results := make([]Result, total)
	workers := min(max(cfg.Concurrency, 1), total)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := searcher{cfg: &cfg, players: make([]match.Player, nEng)}
			defer s.quit()
			for i := range next {
				r, err := s.search(ctx, i/nEng, i%nEng)
				if err != nil {
					fail(err)
					return
				}
				results[i] = r
				if cfg.OnResult != nil {
					mu.Lock()
					cfg.OnResult(r)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range total {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// searcher is one concurrent searcher's players, one per engine.
type searcher struct {
	cfg     *RunConfig
	players []match.Player
}

func (s *searcher) search(ctx context.Context, pos, eng int) (Result, error) {
	p := s.players[eng]
	if p == nil {
		var err error
		p, err = match.NewPlayer(s.cfg.Engines[eng], s.cfg.Builtin)
		if err != nil {
			return Result{}, err // names the engine
		}
		s.players[eng] = p
	}
	r, err := Solve(ctx, p, &s.cfg.Suite.Positions[pos], s.cfg.Limit)
	r.Engine, r.Position = eng, pos
	return r, err
}

func (s *searcher) quit() {
	for _, p := range s.players {
		if p != nil {
			p.Quit()
		}
	}
}
