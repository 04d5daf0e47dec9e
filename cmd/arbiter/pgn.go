package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/jobreport"
)

func newPGNCommand() *cobra.Command {
	var f clientFlags
	var output string
	cmd := &cobra.Command{
		Use:   "pgn TEST|TUNE",
		Short: "Download every game of a match, SPRT test or SPSA tune as PGN",
		Example: `  arbiter pgn s1a2b3c4d5e6 -o games.pgn
  arbiter pgn s1a2b3c4d5e6 | pgn-extract -s`,
		Args: oneArg("TEST", "a test's job id; arbiter status lists them"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			if output == "" || output == "-" {
				_, err := jobreport.StreamPGN(ctx, c, args[0], cmd.OutOrStdout())
				return err
			}
			n, err := jobreport.DownloadPGN(ctx, c, args[0], output)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d games to %s\n", n, output)
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file (default: standard output)")
	return cmd
}
