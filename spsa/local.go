package spsa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/arbiter-chess/arbiter/match"
)

// Local is a tune played on this machine with the match runner: the same
// batches, perturbations and updates as on the cluster, for people without
// one.
type Local struct {
	// Engine is the tuned engine. Engine A of a batch is it with θ + c_k·Δ
	// set over its options, named Name+"+"; engine B has θ − c_k·Δ and is
	// named Name+"-".
	Engine   match.EngineConfig
	Limits   match.Limits
	Game     match.GameConfig
	Chess960 bool
	// Openings gives the opening of pair i (a Book's At).
	Openings func(i int) match.Opening
	// Concurrency is the number of batches played at once (default 1).
	// Updates land in the order batches finish, which Run returns.
	Concurrency int
	// Builtin makes the embedded engine's players; NewPlayer replaces the
	// match library's player factory (tests).
	Builtin   match.BuiltinFactory
	NewPlayer func(match.EngineConfig) (match.Player, error)
	// OnUpdate is called after each update with the tune (under the lock
	// that orders updates: it must not block).
	OnUpdate func(u Update, t *Tune)
	// PGN, when set, receives every game, a batch's games together once
	// the batch is over (batches played at once do not interleave).
	PGN        io.Writer
	PGNOptions match.PGNOptions

	pgnMu sync.Mutex
}

// SideNames are the names of engines A and B of a tune of the engine
// called name.
func SideNames(name string) (a, b string) { return name + "+", name + "-" }

// Run plays every batch of t not yet in skip (batch indexes already
// applied, when resuming) and applies each result as it comes. It returns
// the updates in the order they were applied; on an error or a cancelled
// ctx, those applied so far with the error.
func (l *Local) Run(ctx context.Context, t *Tune, skip map[int]bool) ([]Update, error) {
	if l.Openings == nil {
		return nil, errors.New("tune: no openings")
	}
	if err := l.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	cfg := t.Config()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		next    int
		applied []Update
		firstEr error
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		for next < cfg.Batches() && skip[next] {
			next++
		}
		if next >= cfg.Batches() || firstEr != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	fail := func(err error) {
		mu.Lock()
		if firstEr == nil {
			firstEr = err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	for range max(l.Concurrency, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				b, ok := take()
				if !ok {
					return
				}
				p, err := t.pertOf(&mu, b)
				if err != nil {
					fail(err)
					return
				}
				wins, losses, err := l.play(ctx, t, &mu, p)
				if err != nil {
					if ctx.Err() == nil {
						fail(err)
					}
					return
				}
				mu.Lock()
				err = t.Apply(b, wins, losses)
				if err == nil {
					u := Update{Batch: b, Wins: wins, Losses: losses}
					applied = append(applied, u)
					if l.OnUpdate != nil {
						l.OnUpdate(u, t)
					}
				}
				mu.Unlock()
				if err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return applied, firstEr
	}
	return applied, ctx.Err()
}

// pertOf is batch b's perturbation, read under mu.
func (t *Tune) pertOf(mu *sync.Mutex, b int) (Perturbation, error) {
	mu.Lock()
	defer mu.Unlock()
	return t.Perturbation(b)
}

// play plays one batch from the current θ and returns engine A's wins and
// losses.
func (l *Local) play(ctx context.Context, t *Tune, mu *sync.Mutex, p Perturbation) (wins, losses int, err error) {
	mu.Lock()
	plus, minus, err := t.Sides(p)
	ps := t.cfg.Params
	first, n := t.cfg.BatchRange(p.Batch)
	mu.Unlock()
	if err != nil {
		return 0, 0, err
	}
	a, b := l.Engine, l.Engine
	a.Name, b.Name = SideNames(l.Engine.Name)
	a.Options, b.Options = withParams(l.Engine.Options, ps, plus), withParams(l.Engine.Options, ps, minus)
	openings := make([]match.Opening, n)
	for i := range openings {
		openings[i] = l.Openings(first + i)
		openings[i].Chess960 = openings[i].Chess960 || l.Chess960
	}
	mc := match.MatchConfig{Engines: [2]match.EngineConfig{a, b}, Limits: l.Limits, Game: l.Game, FirstPair: first,
		Concurrency: 1, Builtin: l.Builtin, NewPlayer: l.NewPlayer, PGNOptions: l.PGNOptions}
	var games bytes.Buffer
	if l.PGN != nil {
		mc.PGN = &games
	}
	tot, pairs, err := match.PlayPairs(ctx, mc, openings)
	if err != nil {
		return 0, 0, fmt.Errorf("tune: batch %d: %w", p.Batch, err)
	}
	if len(pairs) != n {
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		return 0, 0, fmt.Errorf("tune: batch %d: played %d of %d pairs", p.Batch, len(pairs), n)
	}
	if l.PGN != nil {
		l.pgnMu.Lock()
		_, err = l.PGN.Write(games.Bytes())
		l.pgnMu.Unlock()
		if err != nil {
			return 0, 0, fmt.Errorf("tune: batch %d: writing its games: %w", p.Batch, err)
		}
	}
	return int(tot.Results.Wins), int(tot.Results.Losses), nil
}

// withParams is opts with every parameter set to its value (replacing an
// option of the same name, in any letter case).
func withParams(opts []match.Option, ps []Param, values []float64) []match.Option {
	out := make([]match.Option, 0, len(opts)+len(ps))
	for _, o := range opts {
		if !hasParam(ps, o.Name) {
			out = append(out, o)
		}
	}
	for i, p := range ps {
		out = append(out, match.Option{Name: p.Name, Value: p.OptionValue(values[i])})
	}
	return out
}

func hasParam(ps []Param, name string) bool {
	for _, p := range ps {
		if strings.EqualFold(p.Name, name) {
			return true
		}
	}
	return false
}

// OptionMap is the values of ps as UCI option values by name.
func OptionMap(ps []Param, values []float64) map[string]string {
	m := make(map[string]string, len(ps))
	for i, p := range ps {
		m[p.Name] = p.OptionValue(values[i])
	}
	return m
}
