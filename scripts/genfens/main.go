// Command genfens writes start positions the way OpenBench's DATAGEN gets
// them from an engine's `genfens` command: from the start position, a
// uniformly random number of plies in [min, max], each a uniformly random
// legal move, redrawn when the plies end the game. One FEN a line, for
// fastchess's -openings format=epd (scripts/bench-datagen.sh).
//
//	go run ./scripts/genfens -n 100 -seed 1 -plies 8-9 > openings.epd
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/arbiter-chess/arbiter/engine"
)

func main() {
	n := flag.Int("n", 100, "positions to write")
	seed := flag.Uint64("seed", 1, "seed of the random plies")
	plies := flag.String("plies", "8-9", "MIN-MAX random plies")
	flag.Parse()
	var lo, hi int
	if _, err := fmt.Sscanf(*plies, "%d-%d", &lo, &hi); err != nil || lo < 0 || lo > hi || hi > 100 {
		fmt.Fprintf(os.Stderr, "genfens: -plies %q: want MIN-MAX, 0 <= MIN <= MAX <= 100\n", *plies)
		os.Exit(2)
	}
	if *n < 1 || *n > 10_000_000 {
		fmt.Fprintf(os.Stderr, "genfens: -n %d: want 1 to 10000000\n", *n)
		os.Exit(2)
	}
	r := rand.New(rand.NewPCG(*seed, 0x67656e66656e73))
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for written := 0; written < *n; {
		pos := engine.StartPosition()
		k := lo + r.IntN(hi-lo+1)
		ok := true
		for range k {
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				ok = false
				break
			}
			pos.MakeMove(moves[r.IntN(len(moves))])
		}
		if !ok || pos.LegalMoveCount() == 0 {
			continue // the plies ended the game: draw again
		}
		fmt.Fprintln(out, pos.FEN())
		written++
	}
}
