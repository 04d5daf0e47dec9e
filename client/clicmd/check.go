package clicmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
)

// CheckRange refuses v outside lo..hi for --flag, worded the same way
// for every integer flag.
func CheckRange(flag string, v, lo, hi int) error {
	if v < lo || v > hi {
		return cliexit.Usage("--%s %d: must be between %d and %d", flag, v, lo, hi)
	}
	return nil
}

// OpenSyzygy opens the Syzygy tables in dir for flag (nil, nil for "").
func OpenSyzygy(flag, dir string) (*syzygy.Tablebase, error) {
	if dir == "" {
		return nil, nil
	}
	tables, err := syzygy.Open(dir)
	if err != nil {
		return nil, cliexit.Usage("%s %s: %v", flag, dir, err)
	}
	return tables, nil
}

// MaxHashMB bounds every --hash (1 TiB).
const MaxHashMB = 1 << 20

// CheckHash refuses a --hash size outside lo..MaxHashMB MB.
func CheckHash(mb, lo int) error {
	if mb < lo || mb > MaxHashMB {
		return cliexit.Usage("--hash %d: must be between %d and %d MB", mb, lo, MaxHashMB)
	}
	return nil
}

// CheckThreads refuses a --threads count outside 0 (all cores)..4096.
func CheckThreads(n int) error {
	if n < 0 || n > 4096 {
		return cliexit.Usage("--threads %d: must be between 0 (all cores) and 4096", n)
	}
	return nil
}

// CheckDepth refuses a missing or out-of-range perft --depth: lo is 0
// where perft(0) = 1 makes sense, 1 where an engine is asked.
func CheckDepth(fl *pflag.FlagSet, depth, lo int) error {
	if !fl.Changed("depth") {
		return Required("depth", fmt.Sprintf("%d to %d", lo, engine.MaxPerftDepth))
	}
	return CheckRange("depth", depth, lo, engine.MaxPerftDepth)
}

// OneArg is cobra.ExactArgs(1) with messages that name the argument
// (name, e.g. "JOB") and where to find one (hint).
func OneArg(name, hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		what := strings.TrimPrefix(cmd.CommandPath(), "arbiter ")
		switch len(args) {
		case 1:
			return nil
		case 0:
			return cliexit.Usage("%s: %s is required (%s)", what, name, hint)
		}
		return cliexit.Usage("%s: give one %s, not %d arguments", what, name, len(args))
	}
}
