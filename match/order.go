package match

import (
	"fmt"
	"math/rand/v2"
)

// OrderOpenings puts a book's openings (in file order) in the order of play:
// "sequential" (or "") keeps it, "random" shuffles with seed (the same seed
// always gives the same order), "fastchess" shuffles as fastchess does with
// -srand seed (so that the same seed plays the same openings in the same
// order as fastchess), and start rotates the result so that play begins at
// that opening. LoadBook and the cluster coordinator both use it,
// so a test's opening order is fixed by its book, order, seed and start.
func OrderOpenings(ops []Opening, order string, seed uint64, start int) ([]Opening, error) {
	switch order {
	case "", "sequential":
	case "random":
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		r.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	case "fastchess":
		fastchessShuffle(ops, seed)
	default:
		return nil, fmt.Errorf("unknown order %q (want sequential, random or fastchess)", order)
	}
	if start < 0 {
		return nil, fmt.Errorf("negative start %d", start)
	}
	if start > 0 && len(ops) > 0 {
		s := start % len(ops)
		ops = append(ops[s:], ops[:s]...)
	}
	return ops, nil
}

// Shuffled reports whether order shuffles the book (by a seed).
func Shuffled(order string) bool { return order == "random" || order == "fastchess" }
