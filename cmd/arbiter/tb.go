package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/engine/syzygy"
)

func newTBCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tb",
		Short: "Syzygy endgame tablebases on this machine",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newTBProbeCommand())
	return cmd
}

type tbProbeFlags struct {
	path   string
	asJSON bool
	moves  bool
}

func newTBProbeCommand() *cobra.Command {
	var f tbProbeFlags
	cmd := &cobra.Command{
		Use:   "probe --path DIR FEN",
		Short: "WDL and DTZ of a position from Syzygy tables",
		Long: `Probes the Syzygy tables in DIR (files such as KQvKR.rtbw and KQvKR.rtbz)
for a position given as FEN (quoted, or as separate words).

WDL is from the side to move: win, cursed-win (won, but drawn by the 50-move
rule), draw, blessed-loss, loss; as a number 2, 1, 0, -1, -2. DTZ is the
distance in plies to the next capture or pawn move on a best line, signed
like WDL, beyond 100 in magnitude for cursed wins and blessed losses; it may
stand for one ply more, as Syzygy documents. Neither looks at the FEN's 50-move
counter; --moves does: it lists every legal move with its result and DTZ
from this position, best first.

A position with castling rights, more pieces than the largest table, or a
material whose table is missing is refused with the reason (exit status 2);
a damaged table file is reported by name (exit status 1). See
docs/tablebases.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTBProbe(cmd.OutOrStdout(), f, strings.Join(args, " "))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.path, "path", "", "directory of the Syzygy tables (required)")
	fl.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fl.BoolVar(&f.moves, "moves", false, "also rank every legal move (needs the tables one move away)")
	return cmd
}

// tbReport is what tb probe prints; --json prints it as is.
type tbReport struct {
	FEN    string        `json:"fen"`
	WDL    int           `json:"wdl"`
	Result string        `json:"result"`
	DTZ    int           `json:"dtz"`
	Moves  []tbMoveEntry `json:"moves,omitempty"`
}

type tbMoveEntry struct {
	UCI    string `json:"uci"`
	SAN    string `json:"san"`
	WDL    int    `json:"wdl"`
	Result string `json:"result"`
	DTZ    int    `json:"dtz"`
	Rank   int    `json:"rank"`
}

func runTBProbe(out io.Writer, f tbProbeFlags, fen string) error {
	if f.path == "" {
		return usageError("--path: required: the directory of the Syzygy tables (files such as KQvK.rtbw)")
	}
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return usageError("FEN: %v", err)
	}
	tb, err := syzygy.Open(f.path)
	if err != nil {
		return usageError("--path %s: %v", f.path, err)
	}
	defer tb.Close()
	report, err := probeReport(tb, &pos, f.moves)
	if err != nil {
		return tbProbeError(err)
	}
	if f.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	fmt.Fprintf(out, "position  %s\nwdl       %s (%d)\ndtz       %d\n", report.FEN, report.Result, report.WDL, report.DTZ)
	for _, m := range report.Moves {
		fmt.Fprintf(out, "  %-6s %-8s %-13s dtz %5d  rank %5d\n", m.UCI, m.SAN, m.Result, m.DTZ, m.Rank)
	}
	return nil
}

func probeReport(tb *syzygy.Tablebase, pos *engine.Position, withMoves bool) (tbReport, error) {
	wdl, err := tb.ProbeWDL(pos)
	if err != nil {
		return tbReport{}, err
	}
	dtz, err := tb.ProbeDTZ(pos)
	if err != nil {
		return tbReport{}, err
	}
	r := tbReport{FEN: pos.FEN(), WDL: int(wdl), Result: wdl.String(), DTZ: dtz}
	if !withMoves {
		return r, nil
	}
	moves, err := tb.RootMoves(pos)
	if err != nil {
		return tbReport{}, err
	}
	r.Moves = []tbMoveEntry{}
	for _, m := range moves {
		r.Moves = append(r.Moves, tbMoveEntry{
			UCI: pos.UCIMove(m.Move), SAN: pos.SAN(m.Move),
			WDL: int(m.WDL), Result: m.WDL.String(), DTZ: m.DTZ, Rank: m.Rank,
		})
	}
	return r, nil
}

// tbProbeError sorts probe errors into bad input (the position, or a
// table the directory lacks) and findings (a damaged file).
func tbProbeError(err error) error {
	var (
		missing *syzygy.MissingTableError
		refused *syzygy.PositionError
	)
	if errors.As(err, &missing) || errors.As(err, &refused) {
		return usageError("%v", err)
	}
	return failure("%v", err)
}
