package matchplan

import (
	"fmt"
	"os"

	"github.com/arbiter-chess/arbiter/engine/syzygy"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// MaxTBPieces bounds --tb-pieces: Syzygy tables exist up to 7 pieces.
const MaxTBPieces = matchspec.MaxTBPieces

// ParseTBSettings checks --tb-pieces, --tb-adjudicate and --tb-ignore50
// into the test's rule. Locally they need --tb DIR; a cluster test
// (Remote) is played with the workers' own tables (worker --syzygy), so
// --tb-pieces N alone asks for tablebase adjudication and --tb is refused.
func ParseTBSettings(f Flags) (match.TBRule, error) {
	r := match.TBRule{Pieces: f.TBPieces, Results: match.TBBoth, Ignore50: f.TBIgnore50}
	on := f.TB != ""
	if f.Remote {
		if f.TB != "" {
			return r, fmt.Errorf("--tb %q: a cluster test is adjudicated with the workers' tables (arbiter worker --syzygy DIR); give --tb-pieces N", f.TB)
		}
		on = f.TBPieces != 0
	}
	need := "--tb DIR"
	if f.Remote {
		need = "--tb-pieces N"
	}
	if !on {
		switch {
		case f.TBPieces != 0:
			return r, fmt.Errorf("--tb-pieces: needs %s", need)
		case f.TBAdjudicate != "":
			return r, fmt.Errorf("--tb-adjudicate: needs %s", need)
		case f.TBIgnore50:
			return r, fmt.Errorf("--tb-ignore50: needs %s", need)
		}
		return match.TBRule{}, nil
	}
	if f.TBPieces < 0 || f.TBPieces > MaxTBPieces {
		return r, fmt.Errorf("--tb-pieces: %d is not in 0..%d (0: as many as the tables have)", f.TBPieces, MaxTBPieces)
	}
	if f.TBPieces > 0 && f.TBPieces < 3 {
		return r, fmt.Errorf("--tb-pieces: %d: tables start at 3 pieces", f.TBPieces)
	}
	if f.TBAdjudicate != "" {
		res, err := match.ParseTBResults(f.TBAdjudicate)
		if err != nil {
			return r, fmt.Errorf("--tb-adjudicate: %v", err)
		}
		r.Results = res
	}
	return r, nil
}

// parseTablebase checks the tablebase flags and, for a local match, opens
// the tables; nil without --tb. A remote match only checks the flags: the
// workers have their own tables (--syzygy).
func parseTablebase(f Flags, adj *match.Adjudication) (*match.TablebaseAdjudication, error) {
	s, err := ParseTBSettings(f)
	if err != nil {
		return nil, err
	}
	adj.Tablebase = s
	if f.TB == "" || f.Remote {
		return nil, nil
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
		TBRule: s, Tables: tables,
		Warn: func(msg string) { fmt.Fprintln(os.Stderr, "warning: "+msg) },
	}, nil
}

// engineTables gives a local match's engines with syzygy=N the tables of
// --tb DIR to probe in search; a cluster test's keep N, which each worker
// resolves on its own tables.
func engineTables(f Flags, plan *Plan) error {
	if f.Remote {
		return nil
	}
	tb := plan.Config.Game.Tablebase
	for i, e := range plan.Engines {
		if e.SyzygyPieces == 0 {
			continue
		}
		if tb == nil {
			return fmt.Errorf("--engine %s: syzygy=%d probes the tables of --tb DIR, and none is given", e.Name, e.SyzygyPieces)
		}
		r, err := e.WithSyzygy(f.TB, tb.Tables.MaxPieces())
		if err != nil {
			return fmt.Errorf("--engine %s: %v", e.Name, err)
		}
		plan.Engines[i] = r
	}
	copy(plan.Config.Engines[:], plan.Engines)
	return nil
}
