package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/engine/search"
)

// benchJSON is bench --json: nodes and nps keyed as in perft --json.
type benchJSON struct {
	Depth     int     `json:"depth"`
	Positions int     `json:"positions"`
	Nodes     int64   `json:"nodes"`
	NPS       int64   `json:"nps"`
	Seconds   float64 `json:"seconds"`
}

func newBenchCommand() *cobra.Command {
	var depth, rounds int
	var verbose, jsonOut, compare bool
	var evalFile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Search the fixed bench positions; print the node signature and speed",
		Long: `Search a fixed set of positions to a fixed depth on one thread with a fresh
hash table each. The total node count is a signature: it changes only when
the search's behaviour changes, never with the machine. Nodes/second is this
machine's speed (workers report it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := clicmd.CheckRange("depth", depth, 1, 40); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if compare {
				if err := clicmd.CheckRange("rounds", rounds, 1, 100); err != nil {
					return err
				}
				return benchCompare(cmd, depth, rounds, evalFile)
			}
			if evalFile != "" || cmd.Flags().Changed("rounds") {
				return usageError("--evalfile and --rounds go with --nnue")
			}
			var progress func(int, string, int64)
			if verbose {
				// With --json, stdout carries the JSON alone.
				progressOut := out
				if jsonOut {
					progressOut = cmd.ErrOrStderr()
				}
				progress = func(i int, fen string, nodes int64) {
					fmt.Fprintf(progressOut, "Position %d/%d: %s\nNodes: %d\n", i+1, len(search.BenchPositions), fen, nodes)
				}
			}
			res, err := search.Bench(depth, progress)
			if err != nil {
				return err
			}
			if jsonOut {
				return json.NewEncoder(out).Encode(benchJSON{Depth: depth, Positions: len(search.BenchPositions),
					Nodes: res.Nodes, NPS: res.NPS(), Seconds: res.Elapsed.Seconds()})
			}
			for _, line := range res.Report() {
				fmt.Fprintln(out, line)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&depth, "depth", search.BenchDepth, "search depth per position")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print each position's node count")
	// -v is also arbiter -v (the version): one meaning per letter.
	cmd.Flags().MarkShorthandDeprecated("verbose", "use --verbose")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object (docs/json.md) instead of the report")
	cmd.Flags().BoolVar(&compare, "nnue", false, "run the bench with the hand-written evaluation and with the net, and print both side by side")
	cmd.Flags().StringVar(&evalFile, "evalfile", "", "the net for --nnue (default: the one embedded in the binary)")
	cmd.Flags().IntVar(&rounds, "rounds", 1, "with --nnue, alternate the two this many times (a loaded machine's noise evens out)")
	return cmd
}

// benchCompare runs the bench with the hand-written evaluation and with
// the net, alternating, and prints nodes and speed side by side.
func benchCompare(cmd *cobra.Command, depth, rounds int, evalFile string) error {
	nnueOpts := map[string]string{search.OptUseNNUE: "true"}
	if evalFile != "" {
		nnueOpts[search.OptEvalFile] = evalFile
	}
	var classic, withNet search.BenchResult
	for r := 0; r < rounds; r++ {
		c, err := search.BenchWith(depth, map[string]string{search.OptUseNNUE: "false"}, nil)
		if err != nil {
			return err
		}
		n, err := search.BenchWith(depth, nnueOpts, nil)
		if err != nil {
			return err
		}
		classic.Nodes, classic.Elapsed = c.Nodes, classic.Elapsed+c.Elapsed
		withNet.Nodes, withNet.Elapsed = n.Nodes, withNet.Elapsed+n.Elapsed
	}
	classic.Elapsed /= time.Duration(rounds)
	withNet.Elapsed /= time.Duration(rounds)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%-10s %12s %12s %12s\n", "evaluation", "nodes", "time (ms)", "nodes/s")
	fmt.Fprintf(out, "%-10s %12d %12d %12d\n", "classic", classic.Nodes, classic.Elapsed.Milliseconds(), classic.NPS())
	fmt.Fprintf(out, "%-10s %12d %12d %12d\n", "nnue", withNet.Nodes, withNet.Elapsed.Milliseconds(), withNet.NPS())
	if classic.NPS() > 0 {
		fmt.Fprintf(out, "nnue/classic nodes/s: %.2f (depth %d, %d positions, mean of %d alternating rounds)\n",
			float64(withNet.NPS())/float64(classic.NPS()), depth, len(search.BenchPositions), rounds)
	}
	return nil
}
