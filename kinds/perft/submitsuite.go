package perft

import (
	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/kinds/perft/perftrun"
)

// perftSuite is the suite of submit perft --epd or --chess960-all: its
// FENs and the number of the first (nil: one position, --fen).
func perftSuite(cmd *cobra.Command, f *submitPerftFlags) ([]string, uint32, error) {
	fenGiven := cmd.Flags().Changed("fen")
	switch {
	case f.epd != "" && f.chess960All:
		return nil, 0, cliexit.Usage("--epd and --chess960-all: give one suite")
	case fenGiven && (f.epd != "" || f.chess960All):
		return nil, 0, cliexit.Usage("--fen with --epd or --chess960-all: give one position or one suite")
	case (f.epd != "" || f.chess960All) && f.depth < 1:
		return nil, 0, cliexit.Usage("--depth %d: a suite needs depth 1 or more", f.depth)
	case f.chess960All:
		fens := make([]string, engine.Chess960Positions)
		for n := range fens {
			fen, err := engine.Chess960StartFEN(n)
			if err != nil {
				return nil, 0, err
			}
			fens[n] = fen
		}
		return fens, 0, nil
	case f.epd != "":
		lines, err := perftrun.LoadPositions(f.epd, f.chess960)
		if err != nil {
			return nil, 0, err
		}
		fens := make([]string, len(lines))
		for i, l := range lines {
			fens[i] = l.EPD.Position.FEN()
		}
		return fens, 1, nil
	}
	return nil, 0, nil
}
