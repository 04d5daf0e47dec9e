package matchplan

import (
	"fmt"
	"os"

	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/match"
)

// MaxTBPieces bounds --tb-pieces: Syzygy tables exist up to 7 pieces.
const MaxTBPieces = 7

// TBSettings are the checked tablebase flags, without the tables (a
// cluster test carries these; each worker opens its own tables).
type TBSettings struct {
	Pieces   int
	Results  match.TBResults
	Ignore50 bool
}

// ParseTBSettings checks --tb-pieces, --tb-adjudicate and --tb-ignore50;
// they need --tb.
func ParseTBSettings(f Flags) (TBSettings, error) {
	s := TBSettings{Pieces: f.TBPieces, Results: match.TBBoth, Ignore50: f.TBIgnore50}
	if f.TB == "" {
		switch {
		case f.TBPieces != 0:
			return s, fmt.Errorf("--tb-pieces: needs --tb DIR")
		case f.TBAdjudicate != "":
			return s, fmt.Errorf("--tb-adjudicate: needs --tb DIR")
		case f.TBIgnore50:
			return s, fmt.Errorf("--tb-ignore50: needs --tb DIR")
		}
		return s, nil
	}
	if f.TBPieces < 0 || f.TBPieces > MaxTBPieces {
		return s, fmt.Errorf("--tb-pieces: %d is not in 0..%d (0: as many as the tables have)", f.TBPieces, MaxTBPieces)
	}
	if f.TBPieces > 0 && f.TBPieces < 3 {
		return s, fmt.Errorf("--tb-pieces: %d: tables start at 3 pieces", f.TBPieces)
	}
	if f.TBAdjudicate != "" {
		r, err := match.ParseTBResults(f.TBAdjudicate)
		if err != nil {
			return s, fmt.Errorf("--tb-adjudicate: %v", err)
		}
		s.Results = r
	}
	return s, nil
}

// parseTablebase checks the tablebase flags and, for a local match, opens
// the tables; nil without --tb. A remote match only checks the flags: the
// workers have their own tables (--syzygy).
func parseTablebase(f Flags) (*match.TablebaseAdjudication, error) {
	s, err := ParseTBSettings(f)
	if err != nil || f.TB == "" || f.Remote {
		return nil, err
	}
	tables, err := syzygy.Open(f.TB)
	if err != nil {
		return nil, fmt.Errorf("--tb %q: %v", f.TB, err)
	}
	if tables.MaxPieces() == 0 {
		return nil, fmt.Errorf("--tb %q: no Syzygy tables (.rtbw) in that directory", f.TB)
	}
	if s.Pieces > tables.MaxPieces() {
		fmt.Fprintf(os.Stderr, "warning: --tb-pieces %d: the tables in %s have at most %d pieces; positions without a table are not adjudicated\n", s.Pieces, f.TB, tables.MaxPieces())
	}
	return &match.TablebaseAdjudication{
		Tables: tables, Pieces: s.Pieces, Results: s.Results, Ignore50: s.Ignore50,
		Warn: func(msg string) { fmt.Fprintln(os.Stderr, "warning: "+msg) },
	}, nil
}
