package main

// The checks that several commands make of the same kind of flag, so
// that each mistake is worded one way whichever command it is made in.

import (
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/engine"
)

// Default perft hash tables, one per purpose (README, "Hash tables"):
// a machine that serves as a worker gets a table that pays off at the
// depths a cluster is asked for; a one-off perft on this machine gets
// none unless asked, since below depth 7 the table costs more to clear
// than it saves.
const (
	// workerHashMB is a worker machine's table: arbiter worker's, and
	// arbiter up's divided among its local workers.
	workerHashMB = 256
	// localPerftHashMB is arbiter perft's.
	localPerftHashMB = 0
	// maxHashMB bounds every --hash (1 TiB).
	maxHashMB = 1 << 20
)

// checkRange refuses v outside lo..hi for --flag, worded the same way
// for every integer flag.
func checkRange(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return usageError("--%s %d: must be between %d and %d", flag, v, lo, hi)
	}
	return nil
}

// checkDepth refuses a missing or out-of-range perft --depth: lo is 0
// where perft(0) = 1 makes sense, 1 where an engine is asked.
func checkDepth(fl *pflag.FlagSet, depth, lo int) error {
	if !fl.Changed("depth") {
		return usageError("--depth is required (%d to %d)", lo, engine.MaxPerftDepth)
	}
	return checkRange("depth", depth, lo, engine.MaxPerftDepth)
}

// checkHash refuses a --hash size outside lo..maxHashMB MB.
func checkHash(mb, lo int) error {
	if mb < lo || mb > maxHashMB {
		return usageError("--hash %d: must be between %d and %d MB", mb, lo, maxHashMB)
	}
	return nil
}
