package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/engine/search"
)

func newBenchCommand() *cobra.Command {
	var depth int
	var verbose bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Search the fixed bench positions; print the node signature and speed",
		Long: `Search a fixed set of positions to a fixed depth on one thread with a fresh
hash table each. The total node count is a signature: it changes only when
the search's behaviour changes, never with the machine. Nodes/second is this
machine's speed (workers report it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if depth < 1 || depth > 40 {
				return usageError("--depth %d: want 1..40", depth)
			}
			out := cmd.OutOrStdout()
			var progress func(int, string, int64)
			if verbose {
				progress = func(i int, fen string, nodes int64) {
					fmt.Fprintf(out, "Position %d/%d: %s\nNodes: %d\n", i+1, len(search.BenchPositions), fen, nodes)
				}
			}
			res, err := search.Bench(depth, progress)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, "===========================")
			fmt.Fprintf(out, "Total time (ms) : %d\n", res.Elapsed.Milliseconds())
			fmt.Fprintf(out, "Nodes searched  : %d\n", res.Nodes)
			fmt.Fprintf(out, "Nodes/second    : %d\n", res.NPS())
			return nil
		},
	}
	cmd.Flags().IntVar(&depth, "depth", search.BenchDepth, "search depth per position")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print each position's node count")
	return cmd
}
