package jobreport

// The built-in kinds register what clients know of them (wire/jobkind)
// from their own packages' init, as every kind does from its own; the
// tests of the reports list and print jobs of those kinds. The perft and
// test kinds register their reports here (kinds/perft and kinds/test
// import this package), so the external tests import them
// (jobreport_test.go), and they register in this test binary for the
// internal tests too (list_test.go, block_test.go).
import (
	_ "github.com/arbiter-chess/arbiter/kinds/spsa"
)
