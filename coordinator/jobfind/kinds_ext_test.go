package jobfind_test

// The perft kind, whose jobs the filters of jobfind_test.go keep by kind:
// it imports coordinator/web, which imports this package, so the
// package's own tests cannot import it; this external test file does,
// and the kind registers in the test binary that runs them all.
import (
	_ "github.com/arbiter-chess/arbiter/kinds/perft"
)
