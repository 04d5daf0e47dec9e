package datagen

// Local generation: a dataset made on one machine, the same batches a
// coordinator would lease (BatchSeed), written in batch order so that the
// file depends on the seed and not on the concurrency. `arbiter datagen`
// and the net loop (local/netloop) both run it.

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/match"
)

// Local says what to generate here and how.
type Local struct {
	Settings  Settings
	Seed      uint64 // the dataset's seed: batch b plays BatchSeed(Seed, b)
	Positions int    // exactly this many records are written
	// Concurrency batches are played at once, one engine each, made by
	// NewPlayer; a batch is BatchGames games.
	Concurrency int
	BatchGames  int
	// KeepDuplicates writes a record of a position already written
	// (counted in LocalStats.Duplicates either way).
	KeepDuplicates bool
	NewPlayer      func() (match.Player, error)
	// Progress, if set, gets a line every two seconds.
	Progress io.Writer
}

// LocalStats are the games whose records are in the file.
type LocalStats struct {
	Positions, Games, Plies int
	WDL                     [3]int // White wins, draws, Black wins
	Duplicates              int
	Tablebase, Rescored     int // games ended by the tables, records whose result the tables changed
}

// keptPlayer is a player that lives across batches: PlayGames quits the
// player it is given at the end of a batch, this one stays for the next.
type keptPlayer struct{ match.Player }

func (keptPlayer) Quit() error { return nil }

type batchResult struct {
	batch int
	games []Game
	err   error
}

// Generate plays batches 0, 1, 2, ... on l.Concurrency engines and writes
// their records to w in batch order until l.Positions are written. first
// is the first engine, started; Generate quits it.
func (l Local) Generate(ctx context.Context, first match.Player, w *Writer) (LocalStats, error) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	results := make(chan batchResult, l.Concurrency)
	var wg sync.WaitGroup
	for i := range l.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := first
			if i > 0 {
				var err error
				if p, err = l.NewPlayer(); err != nil {
					results <- batchResult{batch: -1, err: err}
					return
				}
			}
			defer p.Quit()
			newPlayer := func() (match.Player, error) { return keptPlayer{p}, nil }
			for b := range jobs {
				games, err := PlayGames(ctx, newPlayer, l.Settings, BatchSeed(l.Seed, uint64(b)), l.BatchGames)
				results <- batchResult{batch: b, games: games, err: err}
				if err != nil {
					return
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for b := 0; ; b++ {
			select {
			case jobs <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		// Stop the engines and let the last batches' results fall away.
		cancel()
		go func() {
			for range results {
			}
		}()
		wg.Wait()
		close(results)
	}()

	var st LocalStats
	seen := map[[16]byte]struct{}{}
	pending := map[int][]Game{}
	next := 0
	lastReport := start
	for st.Positions < l.Positions {
		var r batchResult
		select {
		case r = <-results:
		case <-ctx.Done():
			return st, ctx.Err()
		}
		if r.err != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			return st, r.err
		}
		pending[r.batch] = r.games
		for games, ok := pending[next]; ok && st.Positions < l.Positions; games, ok = pending[next] {
			delete(pending, next)
			next++
			for _, g := range games {
				if st.Positions == l.Positions {
					break
				}
				if err := l.write(w, g, seen, &st); err != nil {
					return st, err
				}
			}
		}
		if l.Progress != nil && time.Since(lastReport) >= 2*time.Second {
			lastReport = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(l.Progress, "datagen: %d/%d positions (%.1f%%), %d games, %.0f positions/s\n",
				st.Positions, l.Positions, 100*float64(st.Positions)/float64(l.Positions), st.Games, float64(st.Positions)/el)
		}
	}
	return st, nil
}

// write writes game g's records that pass the filters (and are not
// duplicates, unless kept), at most as many as are still wanted.
func (l Local) write(w *Writer, g Game, seen map[[16]byte]struct{}, st *LocalStats) error {
	recs := Records(g, l.Settings.Filters)
	kept := recs[:0]
	for _, rec := range recs {
		k := PositionKey(rec.FEN)
		if _, dup := seen[k]; dup {
			st.Duplicates++
			if !l.KeepDuplicates {
				continue
			}
		} else {
			seen[k] = struct{}{}
		}
		kept = append(kept, rec)
		if st.Positions+len(kept) == l.Positions {
			break
		}
	}
	if l.Settings.Tablebase.Rescore {
		st.Rescored += RescoreRecords(kept, l.Settings.Tablebase)
	}
	if g.Termination == TermTablebase {
		st.Tablebase++
	}
	if err := w.WriteGame(g, kept); err != nil {
		return err
	}
	st.Positions += len(kept)
	st.Games++
	st.Plies += len(g.Moves)
	st.WDL[g.Result-WhiteWins]++
	return nil
}

// OpenError is WriteFile's error when the file cannot be created, before
// any game is played.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// WriteFile generates the dataset into the file out in format: written
// as out+".partial" and renamed to out once whole, so that a file named
// out is always a whole dataset; after an error what was written stays in
// out+".partial". first is the first engine, started; WriteFile quits it.
func (l Local) WriteFile(ctx context.Context, first match.Player, out string, format Format, info PGNInfo) (LocalStats, error) {
	partial := out + ".partial"
	file, err := os.OpenFile(partial, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		first.Quit()
		return LocalStats{}, &OpenError{err}
	}
	defer file.Close()
	w := NewWriter(file, format, info)
	st, err := l.Generate(ctx, first, w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = file.Close()
	}
	if err == nil {
		err = os.Rename(partial, out)
	}
	return st, err
}
