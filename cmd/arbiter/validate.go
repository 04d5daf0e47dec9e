package main

// The checks that several commands make of the same kind of flag, so
// that each mistake is worded one way whichever command it is made in.

import (
	"strings"

	"github.com/spf13/cobra"
)

// Default perft hash tables, one per purpose (README, "Hash tables"):
// a machine that serves as a worker gets a table that pays off at the
// depths a cluster is asked for; a one-off perft on this machine gets
// none unless asked (kinds/perft's localHashMB), since below depth 7 the
// table costs more to clear than it saves.
const (
	// workerHashMB is a worker machine's table: arbiter worker's, and
	// arbiter up's divided among its local workers.
	workerHashMB = 256
)

// oneArg is cobra.ExactArgs(1) with messages that name the argument
// (name, e.g. "JOB") and where to find one (hint).
func oneArg(name, hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		what := strings.TrimPrefix(cmd.CommandPath(), "arbiter ")
		switch len(args) {
		case 1:
			return nil
		case 0:
			return usageError("%s: %s is required (%s)", what, name, hint)
		}
		return usageError("%s: give one %s, not %d arguments", what, name, len(args))
	}
}
