package jobfind_test

// The perft and test kinds, whose jobs the filters of jobfind_test.go
// keep by kind: they import coordinator/web, which imports this package,
// so the package's own tests cannot import them; this external test file
// does, and the kinds register in the test binary that runs them all.
import (
	_ "github.com/arbiter-chess/arbiter/kinds/perft"
	_ "github.com/arbiter-chess/arbiter/kinds/test"
)
