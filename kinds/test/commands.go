package test

// The test kind's commands: `arbiter submit sprt|match` (with
// --tournament: one test per pairing) and `arbiter pgn TEST|TUNE`. The
// flags are client/testflags', shared with `arbiter up` and `spsa
// confirm`; the test is submitted and followed through client/jobreport
// (RunTestWith, RunTournament), which `up` and `status --wait` print
// through too.

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/client/testflags"
	"github.com/arbiter-chess/arbiter/wire/jobkind"
)

func init() {
	clicmd.RegisterSubmit(jobkind.SPRT, func() *cobra.Command { return newSubmitTestCommand(jobkind.SPRT) })
	clicmd.RegisterSubmit(jobkind.Match, func() *cobra.Command { return newSubmitTestCommand(jobkind.Match) })
	clicmd.RegisterCommand("pgn", newPGNCommand)
}

func newSubmitTestCommand(kind string) *cobra.Command {
	var f testflags.Flags
	var client clicmd.ClientFlags
	var wait, jsonOut bool
	short := "Submit a distributed SPRT test between two engines"
	example := `  arbiter submit sprt --engine name=new,builtin,option.RFPMargin=80 --engine name=base,builtin \
      --each nodes=2000 --openings file=book.epd,order=random,seed=7 --sprt elo0=0,elo1=10 --wait`
	if kind == jobkind.Match {
		short = "Submit a distributed match of a fixed number of games, or a tournament (one test per pairing)"
		example = `  arbiter submit match --engine name=a,builtin --engine name=b,cmd=/usr/games/stockfish \
      --each tc=10+0.1 --openings file=book.pgn --games 1000 --priority 1
  arbiter submit match --engine name=a,builtin --engine name=b,builtin,option.RFPMargin=80 \
      --engine name=c,cmd=/usr/games/stockfish --each nodes=5000 --openings file=book.epd \
      --tournament roundrobin --rounds 50 --games 2 --wait`
	}
	cmd := &cobra.Command{
		Use:     kind,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jsonOut && !wait {
				return cliexit.Usage("--json needs --wait")
			}
			return f.Run(cmd.OutOrStdout(), cmd.ErrOrStderr(), kind == jobkind.SPRT,
				jobreport.TestOutput{Wait: wait, JSON: jsonOut, PGNOut: f.PGNOut, Pages: client.UpPages()}, client.Session)
		},
	}
	client.Add(cmd.Flags())
	f.Add(cmd.Flags(), "")
	f.AddFindable(cmd.Flags())
	if kind == jobkind.Match {
		f.AddTournament(cmd.Flags(), "rated together by --wait")
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "wait for the test to end and print the report")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "with --wait: print the finished test as status --json does (docs/json.md)")
	return cmd
}

// newPGNCommand is `arbiter pgn TEST|TUNE`: every game of a test (or a
// tune, whose games the coordinator keeps the same way) as PGN.
func newPGNCommand() *cobra.Command {
	var output string
	cmd := clicmd.NewClientCommand(&cobra.Command{
		Use:   "pgn TEST|TUNE",
		Short: "Download every game of a match, SPRT test or SPSA tune as PGN",
		Example: `  arbiter pgn s1a2b3c4d5e6 -o games.pgn
  arbiter pgn s1a2b3c4d5e6 | pgn-extract -s`,
		Args: clicmd.OneArg("TEST", "a test's job id; arbiter status lists them"),
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
