package test

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
)

// flags adds the test kind's coordinator flags (workload.Kind.Flags): the
// replay of fixed-node batches by another identity, the engines declared
// deterministic for it, and the tables the replay checks tablebase
// adjudications against. What it returns reads them into the kind's
// settings (a gamepair.Settings), or an error naming the flag.
func flags(fs *pflag.FlagSet) func() (any, error) {
	var (
		s   gamepair.Settings
		dir string
	)
	fs.Float64Var(&s.ReplayFraction, "replay-fraction", 0.05, "share of the batches of fixed-node tests (both engines deterministic there) that a worker of another identity plays again, move for move, before they count, where another live worker identity can play the test (0..1; 0: none)")
	fs.StringSliceVar(&s.DeterministicEngines, "replay-deterministic", nil, "UCI engine commands (as tests name them) that are deterministic at fixed nodes with one thread, so that --replay-fraction applies to their tests (the embedded engine always is)")
	fs.StringVar(&dir, "syzygy", "", "Syzygy tablebase directory: the replay of a batch checks every tablebase adjudication against these tables (docs/sprt-cluster.md)")
	return func() (any, error) {
		if !(s.ReplayFraction >= 0 && s.ReplayFraction <= 1) {
			return nil, fmt.Errorf("--replay-fraction %v: must be between 0 and 1", s.ReplayFraction)
		}
		// The tables stay open for the life of the process, as the
		// coordinator's workloads do.
		tables, err := clicmd.OpenSyzygy("--syzygy", dir)
		if err != nil {
			return nil, err
		}
		if tables != nil {
			s.Syzygy = tables
		}
		return s, nil
	}
}
