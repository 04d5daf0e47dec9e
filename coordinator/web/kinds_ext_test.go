package web_test

// The perft kind registers its page here (kinds/perft imports this
// package), so the package's own tests cannot import it: this external
// test file does, and the kind then registers, page and workload, in the
// test binary that runs them all (pages_test.go, browser_test.go and
// bench_test.go show perft jobs).
import (
	_ "github.com/arbiter-chess/arbiter/kinds/perft"
)
