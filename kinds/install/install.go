// Package install is the one list of the kinds of job under kinds/: a
// blank import each, so that a program (cmd/arbiter, local/localcluster)
// and a test that needs every kind import this package and nothing else.
// Each kind registers every side of itself from its own init (docs/kinds.md).
// Adding a kind is adding its folder and one line here.
package install

import (
	_ "github.com/arbiter-chess/arbiter/kinds/datagen" // DATAGEN: NNUE training data
	_ "github.com/arbiter-chess/arbiter/kinds/epd"     // EPD test suites
	_ "github.com/arbiter-chess/arbiter/kinds/perft"   // PERFT: exact move-tree counts split over the workers
	_ "github.com/arbiter-chess/arbiter/kinds/spsa"    // SPSA tunes
	_ "github.com/arbiter-chess/arbiter/kinds/test"    // match and SPRT tests
	_ "github.com/arbiter-chess/arbiter/kinds/verify"  // VERIFY: another engine's move generator, on the workers
)
