package jobreport

// The built-in kinds register what clients know of them (wire/jobkind)
// from their coordinator packages' init, as every kind does from its own;
// the tests of the reports list and print jobs of those kinds.
import (
	_ "github.com/arbiter-chess/arbiter/coordinator/gamejob"
	_ "github.com/arbiter-chess/arbiter/kinds/perft"
	_ "github.com/arbiter-chess/arbiter/kinds/spsa"
)
