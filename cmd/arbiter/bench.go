package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

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
	var depth int
	var verbose, jsonOut bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Search the fixed bench positions; print the node signature and speed",
		Long: `Search a fixed set of positions to a fixed depth on one thread with a fresh
hash table each. The total node count is a signature: it changes only when
the search's behaviour changes, never with the machine. Nodes/second is this
machine's speed (workers report it).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkRange("depth", depth, 1, 40); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
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
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object (docs/json.md) instead of the report")
	return cmd
}
