//go:build ignore

// nnue-selfplay-labels is a throwaway generator of training positions for
// proving the `arbiter train` pipeline before the farm's DATAGEN exists:
// the embedded engine plays itself at fixed nodes from randomised
// openings and writes bullet's text format (White's score and result).
// It is not the farm's datagen (no resume, no filters beyond the usual
// quiet-position ones, no distribution).
//
//	go run scripts/nnue-selfplay-labels.go -out /work/data/nnue/selfplay.txt -nodes 3000 -minutes 25 -threads 2
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/search"
)

func main() {
	out := flag.String("out", "", "output file (appended)")
	nodes := flag.Int64("nodes", 3000, "nodes per move")
	minutes := flag.Float64("minutes", 10, "stop after this long")
	threads := flag.Int("threads", 2, "games at a time")
	seed := flag.Uint64("seed", 1, "seed of the random openings")
	random := flag.Int("random-plies", 8, "random plies at the start of each game")
	flag.Parse()
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	deadline := time.Now().Add(time.Duration(*minutes * float64(time.Minute)))
	var mu sync.Mutex
	var games, positions atomic.Int64
	var wg sync.WaitGroup
	for t := 0; t < *threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := search.NewEngine(map[string]string{"Hash": "16"})
			if err != nil {
				log.Fatal(err)
			}
			for g := uint64(t); time.Now().Before(deadline); g += uint64(*threads) {
				lines := play(e, rand.New(rand.NewPCG(*seed, g)), *nodes, *random)
				mu.Lock()
				w := bufio.NewWriter(f)
				for _, l := range lines {
					w.WriteString(l)
				}
				w.Flush()
				mu.Unlock()
				games.Add(1)
				positions.Add(int64(len(lines)))
			}
		}()
	}
	wg.Wait()
	fmt.Printf("%d games, %d positions\n", games.Load(), positions.Load())
}

// play plays one game and returns its labelled positions.
func play(e *search.Engine, r *rand.Rand, nodes int64, random int) []string {
	e.NewGame()
	p := engine.StartPosition()
	var history []uint64
	for i := 0; i < random; i++ {
		var ml engine.MoveList
		p.GenerateMoves(&ml)
		if ml.N == 0 {
			return nil
		}
		history = append(history, p.Key())
		p.MakeMove(ml.Moves[r.IntN(ml.N)])
	}
	type rec struct {
		fen   string
		score int
	}
	var recs []rec
	result := "0.5"
	for ply := 0; ply < 400; ply++ {
		if p.LegalMoveCount() == 0 {
			if p.InCheck() {
				result = map[engine.Color]string{engine.White: "0.0", engine.Black: "1.0"}[p.SideToMove()]
			}
			break
		}
		if p.InsufficientMaterial() || p.HalfmoveClock() >= 100 || repeated(history, p.Key()) >= 2 {
			break
		}
		m, info := e.Go(context.Background(), p, history, search.Limits{Nodes: nodes})
		if info.Mate != 0 {
			// decided: play it out without recording mate scores
		} else if !p.InCheck() && !p.IsCapture(m) && !m.IsPromotion() {
			s := info.Score
			if p.SideToMove() == engine.Black {
				s = -s
			}
			recs = append(recs, rec{p.FEN(), s})
		}
		history = append(history, p.Key())
		p.MakeMove(m)
	}
	lines := make([]string, len(recs))
	for i, rc := range recs {
		lines[i] = fmt.Sprintf("%s | %d | %s\n", rc.fen, rc.score, result)
	}
	return lines
}

func repeated(history []uint64, key uint64) int {
	n := 0
	for _, k := range history {
		if k == key {
			n++
		}
	}
	return n
}
