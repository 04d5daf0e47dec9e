package perft

import (
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/kinds/perft/perftsplit"
)

// flags adds the coordinator's perft flags, the bounds of what a perft
// job may ask, and returns what reads them into the kind's settings
// (Config); a bad value is an error naming its flag.
func flags(fs *pflag.FlagSet) func() (any, error) {
	var maxNodes float64
	var maxSplit, maxHeld int
	fs.Float64Var(&maxNodes, "perft-max-nodes", DefaultMaxNodes, "refuse perft jobs whose estimated leaf count is over this (work no farm finishes)")
	fs.IntVar(&maxSplit, "perft-max-split-positions", perftsplit.DefaultLimits.MaxPositions, "unique positions one perft job's split may keep in the coordinator's memory (about 200 bytes each)")
	fs.IntVar(&maxHeld, "perft-max-held-positions", DefaultMaxHeldPositions, "split positions all running perft jobs together may keep in the coordinator's memory (reloaded at each start)")
	return func() (any, error) {
		switch {
		case maxNodes < 0 || math.IsNaN(maxNodes) || math.IsInf(maxNodes, 0):
			return nil, fmt.Errorf("--perft-max-nodes %v: a positive number of leaves, e.g. 1e22", maxNodes)
		case maxHeld < 0:
			return nil, fmt.Errorf("--perft-max-held-positions %d: must be positive", maxHeld)
		case maxSplit < 0:
			return nil, fmt.Errorf("--perft-max-split-positions %d: must be positive", maxSplit)
		}
		return Config{MaxNodes: maxNodes, MaxHeldPositions: maxHeld, SplitLimits: splitLimits(maxSplit)}, nil
	}
}

// splitLimits is perftsplit.DefaultLimits with maxPositions unique
// positions per split when set.
func splitLimits(maxPositions int) perftsplit.Limits {
	lim := perftsplit.DefaultLimits
	if maxPositions > 0 {
		lim.MaxPositions = maxPositions
	}
	return lim
}
