// Package matchplan turns the match flags of `arbiter match`, `arbiter
// submit sprt|match` and `arbiter up --sprt` (engines, --each, openings,
// games or SPRT, adjudication) into a Plan: a match.MatchConfig with its
// book and SPRT bounds for a local run, or a MatchSpec for the cluster
// (cluster.go). Every error refuses an input and names it by its flag.
package matchplan

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/internal/engineproc"
	"github.com/arbiter-chess/arbiter/internal/enginespec"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Flags are the match flags as given on the command line.
type Flags struct {
	Engines        []string
	Each           string
	Openings       string
	Games          int
	SPRT           string
	Concurrency    int
	Resign         string
	Draw           string
	MaxMoves       int
	TimeMargin     int // milliseconds
	HangTimeout    int // milliseconds
	Event          string
	RatingInterval int

	// Remote: the engines run on cluster workers, so a cmd= binary need
	// not exist here.
	Remote bool
}

// Plan is a checked match.
type Plan struct {
	Config      match.MatchConfig
	Book        *match.Book
	SPRT        *sprt.Params // nil: a fixed number of games
	BookName    string       // the book file's base name
	BookOptions match.BookOptions
}

// parseKV splits "k=v,k2=v2,flag" into ordered pairs; a bare word has value "".
func parseKV(flag, s string) ([][2]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s: empty value", flag)
	}
	var out [][2]string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("%s %q: empty item between commas", flag, s)
		}
		k, v, _ := strings.Cut(part, "=")
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, nil
}

func unknownKey(flag, key string, known ...string) error {
	return fmt.Errorf("%s: unknown key %q (known: %s)", flag, key, strings.Join(known, ", "))
}

// Parse checks the flags and loads the book.
func Parse(f Flags) (*Plan, error) {
	plan := &Plan{}
	cfg := &plan.Config
	if err := parseEngines(f, cfg); err != nil {
		return nil, err
	}
	if err := parseOpenings(f.Openings, plan); err != nil {
		return nil, err
	}
	switch {
	case f.Games < 0:
		return nil, fmt.Errorf("--games: %d is negative", f.Games)
	case f.Games%2 != 0:
		return nil, fmt.Errorf("--games: %d is odd: games are played in pairs (each opening with colours swapped)", f.Games)
	case f.Games == 0 && f.SPRT == "":
		return nil, fmt.Errorf("give --games N or --sprt elo0=..,elo1=..")
	}
	cfg.Pairs = f.Games / 2
	if f.SPRT != "" {
		p, err := parseSPRT(f.SPRT)
		if err != nil {
			return nil, err
		}
		plan.SPRT = p
	}
	if f.Concurrency < 1 || f.Concurrency > 1024 {
		return nil, fmt.Errorf("--concurrency: %d is not in 1..1024", f.Concurrency)
	}
	cfg.Concurrency = f.Concurrency
	if err := parseAdjudication(f, &cfg.Game.Adjudication); err != nil {
		return nil, err
	}
	if f.TimeMargin < 0 {
		return nil, fmt.Errorf("--timemargin: %d is negative", f.TimeMargin)
	}
	cfg.Game.TimeMargin = time.Duration(f.TimeMargin) * time.Millisecond
	if f.HangTimeout <= 0 {
		return nil, fmt.Errorf("--hangtimeout: %d is not positive", f.HangTimeout)
	}
	cfg.Game.HangTimeout = time.Duration(f.HangTimeout) * time.Millisecond
	if f.RatingInterval < 0 {
		return nil, fmt.Errorf("--ratinginterval: %d is negative", f.RatingInterval)
	}
	cfg.PGNOptions.Event = f.Event
	if h, err := os.Hostname(); err == nil {
		cfg.PGNOptions.Site = h
	}
	return plan, nil
}

// parseEngines reads --each and the two --engine flags.
func parseEngines(f Flags, cfg *match.MatchConfig) error {
	if len(f.Engines) != 2 {
		return fmt.Errorf("--engine: give exactly two engines (got %d)", len(f.Engines))
	}
	var each enginespec.Spec
	if f.Each != "" {
		s, err := enginespec.Parse(f.Each, enginespec.Each)
		if err != nil {
			return fmt.Errorf("--each: %v", err)
		}
		each = s
	}
	lim, err := enginespec.LimitsOf(each.Limits)
	if err != nil {
		return fmt.Errorf("--each: %v", err)
	}
	cfg.Limits = lim
	for i, s := range f.Engines {
		spec, err := enginespec.Parse(s, enginespec.Match)
		if err != nil {
			return fmt.Errorf("--engine #%d: %v", i+1, err)
		}
		e, err := spec.MatchEngine(each)
		if err != nil {
			return fmt.Errorf("--engine %s: %v", spec.Name, err)
		}
		// On the cluster the workers run the engines: the program need
		// not exist here.
		if e.Proto != string(enginespec.Builtin) && !f.Remote {
			if _, err := engineproc.LookPath(e.Cmd, e.Dir); err != nil {
				return fmt.Errorf("--engine %s: %v", e.Name, err)
			}
		}
		cfg.Engines[i] = e
	}
	if cfg.Engines[0].Name == cfg.Engines[1].Name {
		return fmt.Errorf("--engine: both engines are named %q", cfg.Engines[0].Name)
	}
	for _, e := range cfg.Engines {
		lim := cfg.Limits
		if e.Limits != (match.Limits{}) {
			lim = e.Limits
		}
		if err := lim.Validate(); err != nil {
			return fmt.Errorf("--each: engine %s: %v", e.Name, err)
		}
	}
	return nil
}

// parseOpenings reads --openings and loads the book.
func parseOpenings(s string, plan *Plan) error {
	if s == "" {
		return fmt.Errorf("--openings: required (file=F[,format=epd|pgn][,order=...])")
	}
	kv, err := parseKV("--openings", s)
	if err != nil {
		return err
	}
	var bo match.BookOptions
	for _, p := range kv {
		k, v := p[0], p[1]
		switch k {
		case "file":
			bo.Path = v
		case "format":
			if v != "epd" && v != "pgn" {
				return fmt.Errorf("--openings: format=%q: want epd or pgn", v)
			}
			bo.Format = v
		case "order":
			if v != "random" && v != "sequential" {
				return fmt.Errorf("--openings: order=%q: want random or sequential", v)
			}
			bo.Order = v
		case "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return fmt.Errorf("--openings: seed=%q: want a non-negative integer", v)
			}
			bo.Seed = n
		case "plies":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("--openings: plies=%q: want a non-negative integer", v)
			}
			bo.Plies = n
		case "start":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("--openings: start=%q: want a non-negative integer", v)
			}
			bo.Start = n
		default:
			return unknownKey("--openings", k, "file", "format", "order", "seed", "plies", "start")
		}
	}
	if bo.Path == "" {
		return fmt.Errorf("--openings: missing file=")
	}
	book, err := match.LoadBook(bo)
	if err != nil {
		return fmt.Errorf("--openings: %v", err)
	}
	plan.Book = book
	plan.BookName = filepath.Base(bo.Path)
	plan.BookOptions = bo
	plan.Config.Openings = book.At
	return nil
}

// parseSPRT reads --sprt.
func parseSPRT(s string) (*sprt.Params, error) {
	kv, err := parseKV("--sprt", s)
	if err != nil {
		return nil, err
	}
	p := sprt.DefaultParams()
	seen := map[string]bool{}
	for _, kv := range kv {
		k, v := kv[0], kv[1]
		seen[k] = true
		if k == "model" {
			m, err := sprt.ParseModel(v)
			if err != nil {
				return nil, fmt.Errorf("--sprt: %v", err)
			}
			p.Model = m
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil && (k == "elo0" || k == "elo1" || k == "alpha" || k == "beta") {
			return nil, fmt.Errorf("--sprt: %s=%q: want a number", k, v)
		}
		switch k {
		case "elo0":
			p.Elo0 = x
		case "elo1":
			p.Elo1 = x
		case "alpha":
			p.Alpha = x
		case "beta":
			p.Beta = x
		default:
			return nil, unknownKey("--sprt", k, "elo0", "elo1", "alpha", "beta", "model")
		}
	}
	if !seen["elo0"] || !seen["elo1"] {
		return nil, fmt.Errorf("--sprt: give both elo0= and elo1=")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("--sprt: %v", err)
	}
	return &p, nil
}

// parseAdjudication reads --resign, --draw and --maxmoves.
func parseAdjudication(f Flags, adj *match.Adjudication) error {
	if f.Resign != "" {
		kv, err := parseKV("--resign", f.Resign)
		if err != nil {
			return err
		}
		for _, p := range kv {
			n, err := strconv.Atoi(p[1])
			if err != nil || n <= 0 {
				return fmt.Errorf("--resign: %s=%q: want a positive integer", p[0], p[1])
			}
			switch p[0] {
			case "movecount":
				adj.ResignMoves = n
			case "score":
				adj.ResignScore = n
			default:
				return unknownKey("--resign", p[0], "movecount", "score")
			}
		}
		if adj.ResignMoves == 0 || adj.ResignScore == 0 {
			return fmt.Errorf("--resign: give movecount= and score=")
		}
	}
	if f.Draw != "" {
		kv, err := parseKV("--draw", f.Draw)
		if err != nil {
			return err
		}
		for _, p := range kv {
			n, err := strconv.Atoi(p[1])
			if err != nil || n < 0 {
				return fmt.Errorf("--draw: %s=%q: want a non-negative integer", p[0], p[1])
			}
			switch p[0] {
			case "movenumber":
				adj.DrawMoveNumber = n
			case "movecount":
				adj.DrawMoves = n
			case "score":
				adj.DrawScore = n
			default:
				return unknownKey("--draw", p[0], "movenumber", "movecount", "score")
			}
		}
		if adj.DrawMoves == 0 {
			return fmt.Errorf("--draw: give movecount= (and movenumber=, score=)")
		}
	}
	if f.MaxMoves < 0 {
		return fmt.Errorf("--maxmoves: %d is negative", f.MaxMoves)
	}
	adj.MaxMoves = f.MaxMoves
	return nil
}

// Limits describes the time controls: one, or engine A's vs engine B's.
func (p *Plan) Limits() string {
	cfg := &p.Config
	a, b := cfg.Limits, cfg.Limits
	if cfg.Engines[0].Limits != (match.Limits{}) {
		a = cfg.Engines[0].Limits
	}
	if cfg.Engines[1].Limits != (match.Limits{}) {
		b = cfg.Engines[1].Limits
	}
	if a == b {
		return a.String()
	}
	return a.String() + " vs " + b.String()
}
