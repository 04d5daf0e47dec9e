package datagen

// The flags that say what a DATAGEN dataset is (everything but where it
// runs): `arbiter datagen` here, and `arbiter submit datagen` can register
// the same with add and read them with settings.

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	dg "github.com/arbiter-chess/arbiter/datagen"
	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
)

// datagenFlags are a dataset's flags.
type datagenFlags struct {
	positions   int
	each        string
	randomPlies string
	randomSeed  uint64
	openings    string
	adjudicate  string
	filters     string
	minPly      int
	format      string
	// Tablebase adjudication: `arbiter datagen` only (addTablebase).
	tb        string
	tbPieces  int
	tbRescore bool
	farm      bool // a farm dataset: --tb-pieces alone, the workers' tables
}

// addFarmTablebase adds --tb-pieces for a dataset on the farm, played
// with each worker's own tables (arbiter worker --syzygy DIR).
func (f *datagenFlags) addFarmTablebase(fl *pflag.FlagSet) {
	f.farm = true
	fl.IntVar(&f.tbPieces, "tb-pieces", 0, "adjudicate games by Syzygy tables in positions of at most this many pieces (3..7), with the tables of each worker (arbiter worker --syzygy DIR); only such workers play the dataset")
}

// addTablebase adds --tb, --tb-pieces and --tb-rescore.
func (f *datagenFlags) addTablebase(fl *pflag.FlagSet) {
	fl.StringVar(&f.tb, "tb", "", "Syzygy tablebase directory: adjudicate games by the tables (at 50-move counter 0, as match --tb)")
	fl.IntVar(&f.tbPieces, "tb-pieces", 0, "with --tb: adjudicate positions of at most this many pieces (0 = as many as the tables have)")
	fl.BoolVar(&f.tbRescore, "tb-rescore", false, "with --tb: set each record's result to its own position's tablebase verdict where the tables answer for it")
}

// Flag defaults, from dg.DefaultSettings.
const (
	defaultDatagenFilters = "in-check,tactical,mates"
	defaultAdjudicate     = "win-score=400,win-moves=3,draw-move-number=40,draw-moves=8,draw-score=10,max-moves=400"
)

func (f *datagenFlags) add(fl *pflag.FlagSet) {
	fl.IntVar(&f.positions, "positions", 0, "positions (records) in the dataset, exactly")
	fl.StringVar(&f.each, "each", "", "nodes=N (fixed nodes per move, required) [,option.NAME=VALUE...]")
	fl.StringVar(&f.randomPlies, "random-plies", "8-9", "random legal plies that start every game: MIN-MAX (or N), from the start position or each --openings position")
	fl.Uint64Var(&f.randomSeed, "random-seed", 1, "seed of the random openings: the same seed gives the same dataset with a deterministic engine")
	fl.StringVar(&f.openings, "openings", "", "file=F[,format=epd|pgn]: start positions (the end of each opening), drawn at random by the seed")
	fl.StringVar(&f.adjudicate, "adjudicate", defaultAdjudicate, "win-score=CP,win-moves=N,draw-move-number=M,draw-moves=N,draw-score=CP,max-moves=N (win-moves=0 or draw-moves=0 turns one off)")
	fl.StringVar(&f.filters, "filters", defaultDatagenFilters, "positions left out: in-check, tactical (best move a capture or promotion), mates (mate scores), or none")
	fl.IntVar(&f.minPly, "min-ply", 0, "leave out positions before this ply (from the game's start, random plies included)")
	fl.StringVar(&f.format, "format", "text", "output format: "+dg.Formats)
}

// settings checks the flags and returns the dataset's settings, the engine
// options --each sets, and the output format. Errors name the flag.
func (f *datagenFlags) settings() (dg.Settings, []enginespec.Setting, dg.Format, error) {
	s := dg.DefaultSettings()
	var zero dg.Settings
	format, err := dg.ParseFormat(f.format)
	if err != nil {
		return zero, nil, 0, cliexit.Usage("--format: %v", err)
	}
	if f.positions <= 0 {
		return zero, nil, 0, cliexit.Usage("--positions %d: must be > 0", f.positions)
	}
	if f.each == "" {
		return zero, nil, 0, clicmd.Required("each", "nodes=N: datagen searches a fixed number of nodes per move")
	}
	each, err := enginespec.Parse(f.each, enginespec.Each)
	if err != nil {
		return zero, nil, 0, cliexit.Usage("--each: %v", err)
	}
	if each.Proto != "" {
		return zero, nil, 0, cliexit.Usage("--each: proto= belongs in --engine")
	}
	for _, l := range each.Limits {
		if l.Key != "nodes" {
			return zero, nil, 0, cliexit.Usage("--each: %s=: datagen plays at fixed nodes only (give nodes=N)", l.Key)
		}
		n, err := strconv.Atoi(l.Value)
		if err != nil || n <= 0 {
			return zero, nil, 0, cliexit.Usage("--each: nodes=%q: must be > 0", l.Value)
		}
		s.Nodes = n
	}
	if len(each.Limits) == 0 {
		return zero, nil, 0, cliexit.Usage("--each %q: nodes=N is required", f.each)
	}
	lo, hi, err := parsePlyRange(f.randomPlies)
	if err != nil {
		return zero, nil, 0, cliexit.Usage("--random-plies %q: %v", f.randomPlies, err)
	}
	s.RandomPliesMin, s.RandomPliesMax = lo, hi
	if f.openings != "" {
		if s.Openings, err = loadOpeningFENs(f.openings); err != nil {
			return zero, nil, 0, cliexit.Usage("--openings: %v", err)
		}
	}
	if err := parseAdjudicate(f.adjudicate, &s.Adjudication); err != nil {
		return zero, nil, 0, cliexit.Usage("--adjudicate: %v", err)
	}
	s.Filters = dg.Filters{MinPly: f.minPly}
	for _, name := range strings.Split(f.filters, ",") {
		switch strings.TrimSpace(name) {
		case "in-check":
			s.Filters.SkipInCheck = true
		case "tactical":
			s.Filters.SkipTactical = true
		case "mates":
			s.Filters.SkipMates = true
		case "none", "":
		default:
			return zero, nil, 0, cliexit.Usage("--filters: unknown filter %q (known: in-check, tactical, mates, none)", name)
		}
	}
	if f.farm && f.tbPieces != 0 {
		if f.tbPieces < 3 || f.tbPieces > dg.MaxTBPieces {
			return zero, nil, 0, cliexit.Usage("--tb-pieces %d: must be between 3 and %d", f.tbPieces, dg.MaxTBPieces)
		}
		s.Tablebase.Pieces = f.tbPieces
	} else if f.tb != "" {
		tables, err := clicmd.OpenSyzygy("--tb", f.tb)
		if err != nil {
			return zero, nil, 0, err
		}
		s.Tablebase = dg.Tablebase{Tables: tables, Pieces: f.tbPieces, Rescore: f.tbRescore,
			Warn: func(msg string) { fmt.Fprintln(os.Stderr, "warning: "+msg) }}
	} else if f.tbPieces != 0 || f.tbRescore {
		return zero, nil, 0, cliexit.Usage("--tb-pieces, --tb-rescore: need --tb DIR")
	}
	if err := s.Validate(); err != nil {
		return zero, nil, 0, cliexit.Usage("%v", err)
	}
	return s, each.Options, format, nil
}

// parsePlyRange reads "8-9" or "8".
func parsePlyRange(v string) (int, int, error) {
	a, b, isRange := strings.Cut(strings.TrimSpace(v), "-")
	lo, err1 := strconv.Atoi(a)
	hi := lo
	var err2 error
	if isRange {
		hi, err2 = strconv.Atoi(b)
	}
	if err1 != nil || err2 != nil || lo < 0 || hi < lo || hi > dg.MaxRandomPlies {
		return 0, 0, fmt.Errorf("want MIN-MAX or N, 0 <= MIN <= MAX <= %d", dg.MaxRandomPlies)
	}
	return lo, hi, nil
}

// parseAdjudicate sets the keys given; the others keep their defaults.
func parseAdjudicate(v string, a *dg.Adjudication) error {
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return fmt.Errorf("%q is not key=value", part)
		}
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("%s=%q: not an integer", k, val)
		}
		switch k {
		case "win-score":
			a.WinScore = n
		case "win-moves":
			a.WinMoves = n
		case "draw-move-number":
			a.DrawMoveNumber = n
		case "draw-moves":
			a.DrawMoves = n
		case "draw-score":
			a.DrawScore = n
		case "max-moves":
			a.MaxMoves = n
		default:
			return fmt.Errorf("unknown key %q (known: win-score, win-moves, draw-move-number, draw-moves, draw-score, max-moves)", k)
		}
	}
	return nil
}

// loadOpeningFENs reads --openings file=F[,format=epd|pgn]: the position
// at the end of each opening.
func loadOpeningFENs(v string) ([]string, error) {
	var bo match.BookOptions
	for _, part := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "file":
			bo.Path = val
		case "format":
			bo.Format = val
		default:
			return nil, fmt.Errorf("unknown key %q (known: file, format)", k)
		}
	}
	if bo.Path == "" {
		return nil, fmt.Errorf("missing file=")
	}
	book, err := match.LoadBook(bo)
	if err != nil {
		return nil, err
	}
	if len(book.Openings) > dg.MaxOpenings {
		return nil, fmt.Errorf("%s: %d openings, at most %d", bo.Path, len(book.Openings), dg.MaxOpenings)
	}
	fens := make([]string, 0, len(book.Openings))
	for _, op := range book.Openings {
		pos := engine.StartPosition()
		if op.FEN != "" {
			if pos, err = engine.ParseFEN(op.FEN); err != nil {
				return nil, fmt.Errorf("%s: opening %d: %v", bo.Path, op.ID+1, err)
			}
		}
		for _, mv := range op.Moves {
			m, err := pos.ParseUCIMove(mv)
			if err != nil {
				return nil, fmt.Errorf("%s: opening %d: %v", bo.Path, op.ID+1, err)
			}
			pos.MakeMove(m)
		}
		fens = append(fens, pos.FEN())
	}
	return fens, nil
}
