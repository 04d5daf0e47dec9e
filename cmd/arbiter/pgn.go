package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/jobreport"
)

func newPGNCommand() *cobra.Command {
	var output string
	cmd := clicmd.NewClientCommand(&cobra.Command{
		Use:   "pgn TEST|TUNE",
		Short: "Download every game of a match, SPRT test or SPSA tune as PGN",
		Example: `  arbiter pgn s1a2b3c4d5e6 -o games.pgn
  arbiter pgn s1a2b3c4d5e6 | pgn-extract -s`,
		Args: oneArg("TEST", "a test's job id; arbiter status lists them"),
	}, "", func(r *clicmd.Call, args []string) error {
		if output == "" || output == "-" {
			_, err := jobreport.StreamPGN(r.Ctx, r.C, args[0], r.Out)
			return err
		}
		n, err := jobreport.DownloadPGN(r.Ctx, r.C, args[0], output)
		if err != nil {
			return err
		}
		fmt.Fprintf(r.ErrOut, "wrote %d games to %s\n", n, output)
		return nil
	})
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file (default: standard output)")
	return cmd
}
