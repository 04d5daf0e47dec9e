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

	"github.com/arbiter-chess/arbiter/enginehost/engineproc"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Flags are the match flags as given on the command line.
type Flags struct {
	Engines  []string
	Each     string
	Openings string
	Games    int
	SPRT     string
	// Stop is --stop (StopUsage): precision=ELO.
	Stop           string
	Concurrency    int
	Resign         string
	Draw           string
	MaxMoves       int
	TimeMargin     int // milliseconds
	HangTimeout    int // milliseconds
	Event          string
	RatingInterval int

	// TB is a Syzygy directory whose tables adjudicate games (fastchess's
	// -tb); TBPieces, TBAdjudicate and TBIgnore50 its -tbpieces,
	// -tbadjudicate and -tbignore50 (tb.go).
	TB           string
	TBPieces     int
	TBAdjudicate string
	TBIgnore50   bool

	// Tournament is roundrobin or gauntlet ("": a round-robin, which for
	// two engines is a plain match); Seeds the gauntlet's seeds.
	Tournament string
	Seeds      int
	// Rounds, when given, makes Games the games per pairing and round
	// (fastchess's and cutechess-cli's meaning); without it Games is a
	// two-engine match's total. Repeat is the games per opening.
	Rounds  int
	Repeat  int
	Recover bool
	// NoSwap and Reverse change the schedule's colours (fastchess's
	// -noswap and -reverse; tournaments only).
	NoSwap, Reverse bool
	// PGNOut is the local match's PGN file (appended; cut back on resume).
	PGNOut string

	// Remote: the engines run on cluster workers, so a cmd= binary need
	// not exist here.
	Remote bool
}

// Plan is a checked match.
type Plan struct {
	// Flags are what the plan was made of (the state file keeps them).
	Flags Flags
	// Engines are all the engines; Config.Engines the first two (a
	// two-engine match, the cluster's).
	Engines  []match.EngineConfig
	Schedule *match.Schedule
	Config   match.MatchConfig
	Book     *match.Book
	SPRT     *sprt.Params // nil: a fixed number of games
	// StopPrecision ends a two-engine match once its anytime-valid Elo
	// interval is narrower than this many Elo (0: no such stop).
	StopPrecision float64
	BookName      string // the book file's base name
	BookOptions   match.BookOptions
	// Travel holds the first two engines when they, or their nets, travel
	// to the workers (upload=, source=, artifact=, net=: cluster tests
	// only, which enginespec enforces), by position; the others are zero.
	Travel [2]enginespec.Spec
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
	plan := &Plan{Flags: f}
	cfg := &plan.Config
	if err := parseEngines(f, plan); err != nil {
		return nil, err
	}
	if f.Openings != "" || f.Remote {
		if err := parseOpenings(f.Openings, plan); err != nil {
			return nil, err
		}
	}
	if f.SPRT != "" {
		if len(plan.Engines) != 2 {
			return nil, fmt.Errorf("--sprt: an SPRT is between two engines (got %d)", len(plan.Engines))
		}
		p, err := parseSPRT(f.SPRT)
		if err != nil {
			return nil, err
		}
		plan.SPRT = p
	}
	precision, err := ParseStop(f.Stop)
	if err != nil {
		return nil, err
	}
	plan.StopPrecision = precision
	if plan.StopPrecision > 0 && len(plan.Engines) != 2 {
		return nil, fmt.Errorf("--stop: a precision stop is for a match of two engines (got %d)", len(plan.Engines))
	}
	if err := parseSchedule(f, plan); err != nil {
		return nil, err
	}
	if f.Concurrency < 1 || f.Concurrency > 1024 {
		return nil, fmt.Errorf("--concurrency: %d is not in 1..1024", f.Concurrency)
	}
	cfg.Concurrency = f.Concurrency
	if err := parseGameSettings(f, cfg); err != nil {
		return nil, err
	}
	if err := engineTables(f, plan); err != nil {
		return nil, err
	}
	if f.RatingInterval < 0 {
		return nil, fmt.Errorf("--ratinginterval: %d is negative", f.RatingInterval)
	}
	return plan, nil
}

// ParseSetup checks what every game is played with besides the engines
// (--each, --openings, adjudication, margins, --event) and loads the book:
// a plan without engines, pairs or SPRT, and --each's settings, which an
// engine's own (enginespec.Spec.MatchEngine) go over. A tune plays one
// engine against itself with this (spec/spsaplan).
func ParseSetup(f Flags) (*Plan, enginespec.Spec, error) {
	plan := &Plan{Flags: f}
	cfg := &plan.Config
	each, lim, err := parseEach(f)
	if err != nil {
		return nil, each, err
	}
	cfg.Limits = lim
	if err := parseOpenings(f.Openings, plan); err != nil {
		return nil, each, err
	}
	if err := parseGameSettings(f, cfg); err != nil {
		return nil, each, err
	}
	return plan, each, nil
}

// parseEach reads --each: settings every engine gets unless its own spec
// says otherwise, and the limits among them.
func parseEach(f Flags) (enginespec.Spec, match.Limits, error) {
	var each enginespec.Spec
	if f.Each != "" {
		s, err := enginespec.Parse(f.Each, enginespec.Each)
		if err != nil {
			return each, match.Limits{}, fmt.Errorf("--each: %v", err)
		}
		each = s
	}
	lim, err := enginespec.LimitsOf(each.Limits)
	if err != nil {
		return each, match.Limits{}, fmt.Errorf("--each: %v", err)
	}
	return each, lim, nil
}

// parseGameSettings reads adjudication, the time margin, the hang timeout
// and the PGN's event and site.
func parseGameSettings(f Flags, cfg *match.MatchConfig) error {
	if err := parseAdjudication(f, &cfg.Game.Adjudication); err != nil {
		return err
	}
	tb, err := parseTablebase(f, &cfg.Game.Adjudication)
	if err != nil {
		return err
	}
	cfg.Game.Tablebase = tb
	if f.TimeMargin < 0 {
		return fmt.Errorf("--timemargin: %d is negative", f.TimeMargin)
	}
	cfg.Game.TimeMargin = time.Duration(f.TimeMargin) * time.Millisecond
	if f.HangTimeout <= 0 {
		return fmt.Errorf("--hangtimeout: %d is not positive", f.HangTimeout)
	}
	cfg.Game.HangTimeout = time.Duration(f.HangTimeout) * time.Millisecond
	cfg.PGNOptions.Event = f.Event
	if h, err := os.Hostname(); err == nil {
		cfg.PGNOptions.Site = h
	}
	return nil
}

// tournamentGiven reports whether the flags ask for fastchess's
// rounds-and-games schedule rather than a two-engine match of --games
// games.
func (f Flags) tournamentGiven() bool {
	return len(f.Engines) > 2 || f.Tournament != "" || f.Rounds > 0 || f.Repeat > 0 || f.Seeds > 0 || f.NoSwap || f.Reverse
}

// parseSchedule reads --tournament, --seeds, --rounds, --games and
// --repeat. A two-engine match without --rounds keeps its own meaning of
// --games (the total, in pairs); otherwise --games is per pairing and
// round, as in fastchess and cutechess-cli.
func parseSchedule(f Flags, plan *Plan) error {
	n := len(plan.Engines)
	switch {
	case f.Games < 0:
		return fmt.Errorf("--games: %d is negative", f.Games)
	case f.Rounds < 0:
		return fmt.Errorf("--rounds: %d is negative", f.Rounds)
	case f.Repeat < 0:
		return fmt.Errorf("--repeat: %d is negative", f.Repeat)
	case f.Seeds < 0:
		return fmt.Errorf("--seeds: %d is negative", f.Seeds)
	}
	kind := match.RoundRobin
	switch f.Tournament {
	case "", "roundrobin", "round-robin":
	case "gauntlet":
		kind = match.Gauntlet
	default:
		return fmt.Errorf("--tournament: %q: want roundrobin or gauntlet", clip(f.Tournament))
	}
	if f.Seeds > 0 && kind != match.Gauntlet {
		return fmt.Errorf("--seeds: seeds are for --tournament gauntlet")
	}
	var s *match.Schedule
	var err error
	if !f.tournamentGiven() {
		switch {
		case f.Games%2 != 0:
			return fmt.Errorf("--games: %d is odd: games are played in pairs (each opening with colours swapped); or give --rounds for fastchess's rounds of --games games", f.Games)
		case f.Games == 0 && f.SPRT == "" && f.Stop == "":
			return fmt.Errorf("give --games N, --sprt elo0=..,elo1=.. or --stop precision=ELO")
		}
		plan.Config.Pairs = f.Games / 2
		s, err = match.NewSchedule(2, match.RoundRobin, 0, f.Games/2, 2, 2)
	} else {
		if f.Rounds == 0 && f.SPRT == "" {
			return fmt.Errorf("--rounds: required for a tournament (%d engines: --rounds R, each pairing playing --games games a round)", n)
		}
		s, err = match.NewSchedule(n, kind, f.Seeds, f.Rounds, f.Games, f.Repeat)
		if err == nil {
			s.NoSwap, s.Reverse = f.NoSwap, f.Reverse
		}
		switch {
		case err == nil && f.SPRT != "" && f.NoSwap:
			err = fmt.Errorf("the SPRT counts game pairs with colours swapped: not with -noswap")
		case err == nil && f.SPRT != "" && !s.Paired():
			err = fmt.Errorf("the SPRT counts game pairs: give an even --repeat")
		}
	}
	if err != nil {
		return fmt.Errorf("--tournament, --rounds, --games, --repeat: %v", err)
	}
	plan.Schedule = s
	return nil
}

// clip quotes at most 100 bytes of a bad input.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// parseEngines reads --each and the --engine flags: two for the cluster,
// two or more here.
func parseEngines(f Flags, plan *Plan) error {
	cfg := &plan.Config
	if len(f.Engines) < 2 {
		return fmt.Errorf("--engine: give at least two engines (got %d)", len(f.Engines))
	}
	use := enginespec.LocalMatch
	if f.Remote {
		use = enginespec.Match
	}
	each, lim, err := parseEach(f)
	if err != nil {
		return err
	}
	cfg.Limits = lim
	names := map[string]int{}
	for i, s := range f.Engines {
		spec, err := enginespec.Parse(s, use)
		if err != nil {
			return fmt.Errorf("--engine #%d: %v", i+1, err)
		}
		label := spec.Name
		if label == "" {
			label = "#" + strconv.Itoa(i+1)
		}
		e, err := spec.MatchEngine(each)
		if err != nil {
			return fmt.Errorf("--engine %s: %v", label, err)
		}
		// On the cluster the workers run the engines: the program need
		// not exist here.
		if e.Proto != string(enginespec.Builtin) && !f.Remote {
			if _, err := engineproc.LookPath(e.Cmd, e.Dir); err != nil {
				return fmt.Errorf("--engine %s: %v", label, err)
			}
		}
		// The same check as the coordinator's at submit: a weight of the
		// hand-written evaluation beside the net changes nothing, and a
		// match of it would measure two identical engines.
		if e.Proto == string(enginespec.Builtin) {
			if err := matchspec.CheckBuiltinOptions(label, e.OptionMap()); err != nil {
				return fmt.Errorf("--engine %s: %v", label, err)
			}
		}
		if j, ok := names[e.Name]; ok && e.Name != "" {
			if len(f.Engines) == 2 {
				return fmt.Errorf("--engine: both engines are named %q", e.Name)
			}
			return fmt.Errorf("--engine: engines #%d and #%d are both named %q", j+1, i+1, e.Name)
		}
		names[e.Name] = i
		if (spec.Travels() || spec.HasNet()) && i < len(plan.Travel) {
			plan.Travel[i] = spec
		}
		plan.Engines = append(plan.Engines, e)
	}
	copy(cfg.Engines[:], plan.Engines)
	for i, e := range plan.Engines {
		if err := e.LimitsOr(cfg.Limits).Validate(); err != nil {
			label := e.Name
			if label == "" {
				label = "#" + strconv.Itoa(i+1)
			}
			return fmt.Errorf("--each: engine %s: %v", label, err)
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
			if v != "random" && v != "sequential" && v != "fastchess" {
				return fmt.Errorf("--openings: order=%q: want random, sequential or fastchess", v)
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

// RepeatNote warns, for a two-engine match under node or depth limits
// alone, when the match plays an opening more than once: most engines,
// searching single-threaded to a fixed node count or depth, replay the
// same game from the same opening with the same colours, so the repeats
// add games but no information, and the error bars (and an SPRT's LLR)
// overstate what is known. Our own verification of SPSA tunes fell into
// it: 1,200 games at nodes=4000 on a 200-opening book were 400 distinct
// games three times. Empty when there is nothing to say.
func (p *Plan) RepeatNote() string {
	// An SPRT without a cap is noted only when its book repeats within
	// sprtGames games, a length an SPRT near its bounds often reaches.
	const sprtGames = 20000
	if p.Flags.tournamentGiven() || p.Schedule == nil {
		return ""
	}
	for _, e := range p.Engines {
		if !e.LimitsOr(p.Config.Limits).Clockless() {
			return ""
		}
	}
	openings, from := 1, "the start position"
	if p.Book != nil {
		openings, from = len(p.Book.Openings), fmt.Sprintf("the %d openings of %s", len(p.Book.Openings), p.BookName)
	}
	const why = "at fixed nodes or depth most engines replay the same game from the same opening, so repeats add nothing to the result (a larger book avoids them)"
	games := p.Schedule.Len()
	if games < 0 {
		if 2*openings >= sprtGames {
			return ""
		}
		return fmt.Sprintf("Note: without --games the match plays %s again after %d games; %s", from, 2*openings, why)
	}
	if pairs := games / 2; pairs > openings {
		return fmt.Sprintf("Note: %d games play %s up to %d times each; %s", games, from, (pairs+openings-1)/openings, why)
	}
	return ""
}

// gamesPerProc is how many games at once one processor of Go code serves
// in a match of engine processes. The runner's own work is under 20 ms of
// CPU per game at nodes=5000 (docs/match.md), a game some 20 s, so one
// processor is busy well under 1 % of its time per game; 16 games leave
// room for faster time controls, where a game's moves come closer together.
const gamesPerProc = 16

// RunnerProcs is the number of processors (GOMAXPROCS) the match needs, or
// 0 when an engine plays in this process (builtin), which needs them all.
//
// Why fewer than the machine has: each time an engine's output wakes a
// game, the Go scheduler, seeing idle processors, wakes a second thread to
// look for more work, and on a virtual machine every such wake-up costs
// tens of microseconds of this process's CPU. With one processor there is
// no idle one to wake: 1.0–1.3 ms less runner CPU per game, in four pairs
// of runs at nodes=5000 (docs/match.md "Figures").
func (p *Plan) RunnerProcs() int {
	for _, e := range p.Engines {
		if e.Proto == string(enginespec.Builtin) {
			return 0
		}
	}
	return (max(p.Config.Concurrency, 1) + gamesPerProc - 1) / gamesPerProc
}

// Clockless reports whether no engine plays under a clock (only nodes= or
// depth= limits): then nothing is charged for when the runner sees a move.
func (p *Plan) Clockless() bool {
	for _, e := range p.Engines {
		if !e.LimitsOr(p.Config.Limits).Clockless() {
			return false
		}
	}
	return len(p.Engines) > 0
}

// Limits describes the time controls: one, or each engine's in order
// ("nodes=300 vs nodes=600").
func (p *Plan) Limits() string {
	var all []string
	same := true
	for _, e := range p.Engines {
		l := e.LimitsOr(p.Config.Limits)
		all = append(all, l.String())
		same = same && all[0] == l.String()
	}
	if same {
		return all[0]
	}
	return strings.Join(all, " vs ")
}
