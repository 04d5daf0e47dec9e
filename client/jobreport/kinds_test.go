package jobreport

// The built-in kinds register what clients know of them (wire/jobkind)
// from their coordinator packages' init, as every kind does from its own;
// the tests of the reports list and print jobs of those kinds. The perft
// kind registers its report here (kinds/perft imports this package), so
// the external tests import it (jobreport_test.go), and it registers in
// this test binary for the internal tests too (list_test.go).
import (
	_ "github.com/arbiter-chess/arbiter/kinds/spsa"
	_ "github.com/arbiter-chess/arbiter/kinds/test"
)
