// Package fastchesscli reads fastchess's and cutechess-cli's command lines
// (single-dash options, each followed by its space-separated values or
// key=value groups) into `arbiter match`'s configuration
// (spec/matchplan), and plays the match with their standard output
// (run.go, output.go), so that scripts and testing farms written for
// either runner (Fishtest's and OpenBench's workers among them) can call
// `arbiter match` unchanged. In the fastchess dialect the PGN file is
// fastchess's (match.PGNOptions.Fastchess) and engines' info lines are
// read, and their PVs checked, as fastchess does (pvcheck.go).
//
// Every option and key is either carried out or refused by name: nothing
// is silently dropped. What fastchess does and arbiter cannot (tablebase
// adjudication, CPU affinity, a pause between games, ...) is an error
// naming the option.
package fastchesscli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
)

// Dialect is whose meaning the options have where the two runners differ
// (-repeat, -pgnout's plain form, the default output).
type Dialect int

const (
	Fastchess Dialect = iota
	Cutechess
)

func (d Dialect) String() string {
	if d == Cutechess {
		return "cutechess-cli"
	}
	return "fastchess"
}

// Invocation is a parsed command line: the match, and how this run reports
// and keeps it.
type Invocation struct {
	Dialect Dialect
	Flags   matchplan.Flags

	// Output is "fastchess" or "cutechess": the line formats printed.
	Output string
	// RatingInterval: print the report every this many game pairs (games
	// without -report penta=true, and in the cutechess format); 0: at the
	// end only. ScoreInterval: the cutechess format's "Score of" line
	// every this many games.
	RatingInterval int
	ScoreInterval  int
	Penta          bool

	// StateFile keeps the match as games finish (-config outname=, written
	// every AutosaveInterval games and at the end; "" with
	// -autosaveinterval 0); Resume is a state file to continue (-config
	// file= naming one).
	StateFile        string
	AutosaveInterval int
	Resume           string

	PGNAppend   bool // -pgnout append= (default true)
	PGNNodes    bool // -pgnout nodes=true: n=NODES in each move's comment
	PGNSelDepth bool // -pgnout seldepth=true: sd=SELDEPTH
	PGNTimeLeft bool // -pgnout timeleft=true: tl=SECONDSs, the clock after the move
	EPDOut      string
	EPDAppend   bool
	CRC32       bool // -crc32 pgn=true: print the PGN file's CRC32 after each game
	// CheckMatePVs (-check-mate-pvs): a mate score's PV must reach the
	// mate (pvcheck.go). TestEnv (-testEnv): a PV warning is one line.
	CheckMatePVs, TestEnv bool
	LogFile               string // -log file=: a copy of every output line
	Site                  string
	Version               bool // -version: print the version and stop
	// ShuffledBook: fastchess shuffles the book (-openings order=random)
	// and says so first ("Indexing opening suite...").
	ShuffledBook bool
	Help         bool

	// Notes are said on standard error before the match: options accepted
	// whose effect differs from fastchess's, each naming the option.
	Notes []string

	// Strict is -strict: the match stops, exit status 1, at the first
	// incident (a crash, hang, time loss, illegal move, protocol error);
	// time overruns within the margin and restarts do not count.
	Strict bool
	// Wait is -wait: the pause after each game before its slot plays the
	// next.
	Wait time.Duration

	// StartupTimeout, ReadyTimeout: -startup-ms, -ping-ms.
	StartupTimeout, ReadyTimeout time.Duration
}

// option is one option of the command line with its values.
type option struct {
	name   string // without the dash
	values []string
}

// split cuts argv into options: a word starting with '-' and a letter
// starts one; the words up to the next such word are its values. A value
// such as "score=-20" or "args=-x" does not start with '-' and a negative
// number does not start with a letter, so neither is taken for an option.
func split(args []string) ([]option, error) {
	var out []option
	for _, a := range args {
		if isOption(a) {
			out = append(out, option{name: strings.TrimLeft(a, "-")})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%q: a value before any option (options start with '-', e.g. -engine cmd=./engine)", clip(a))
		}
		out[len(out)-1].values = append(out[len(out)-1].values, a)
	}
	return out, nil
}

func isOption(a string) bool {
	s := strings.TrimPrefix(a, "-")
	if s == a {
		return false
	}
	s = strings.TrimPrefix(s, "-")
	return s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') && !strings.Contains(s, "=")
}

// Detect reports whether args (after `match`) are a fastchess or
// cutechess-cli command line: some word is a single-dash option of more
// than one letter (`arbiter match`'s own flags are double-dash, and it has
// no one-letter flags).
func Detect(args []string) bool {
	for _, a := range args {
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && isOption(a) {
			return true
		}
	}
	return false
}

// DialectOf is the dialect a program name implies: cutechess-cli when the
// binary is called so (a symlink), else fastchess.
func DialectOf(argv0 string) (Dialect, bool) {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(argv0)), ".exe")
	switch {
	case strings.HasPrefix(base, "cutechess"):
		return Cutechess, true
	case strings.HasPrefix(base, "fastchess"):
		return Fastchess, true
	}
	return Fastchess, false
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// refused lists options fastchess or cutechess-cli have and arbiter does
// not, with why: each is an error naming it.
var refused = map[string]string{
	"use-affinity":    "CPU affinity is not supported",
	"show-latency":    "latency reports are not supported",
	"ucinewgame-ms":   "the ucinewgame wait is not configurable (the readyok wait, -ping-ms, bounds it)",
	"compliance":      "the UCI compliance check is not supported (arbiter verify checks an engine's move generator)",
	"debug":           "debug output is not supported",
	"pgnin":           "cutechess-cli's -pgnin (replaying games) is not supported",
	"bookmode":        "polyglot books are not supported (use -openings with an EPD or PGN file)",
	"outcomeinterval": "cutechess-cli's outcome interval is not supported",
	"resultformat":    "cutechess-cli's result formats are not supported",
	"engines":         "cutechess-cli's engines.json is not read (give -engine cmd=...)",
}

// Parse reads a fastchess or cutechess-cli command line (without the
// program name).
func Parse(args []string, d Dialect) (*Invocation, error) {
	opts, err := split(args)
	if err != nil {
		return nil, err
	}
	inv := &Invocation{Dialect: d, Output: "fastchess", RatingInterval: 10, ScoreInterval: 1, Penta: true,
		AutosaveInterval: 20, StateFile: "config.json", PGNAppend: true, EPDAppend: true}
	if d == Cutechess {
		inv.Output, inv.RatingInterval, inv.Penta = "cutechess", 0, false
		// cutechess-cli keeps no state file.
		inv.AutosaveInterval, inv.StateFile = 0, ""
	}
	f := &inv.Flags
	f.Concurrency, f.HangTimeout, f.Rounds, f.Games = 1, 30000, 2, 2
	if d == Cutechess {
		f.Rounds, f.Games = 1, 1
	}
	p := &parser{d: d, inv: inv, f: f}
	for _, o := range opts {
		a := arg{option: o, flag: "-" + o.name}
		if why, ok := refused[o.name]; ok {
			return nil, fmt.Errorf("%s: %s", a.flag, why)
		}
		handled := false
		for _, read := range []func(arg) (bool, error){p.scheduleOption, p.gameOption, p.playOption, p.reportOption, p.runOption} {
			if handled, err = read(a); handled || err != nil {
				break
			}
		}
		if err != nil {
			return nil, err
		}
		if !handled {
			return nil, fmt.Errorf("%s: unknown option of %s (see docs/match.md, \"Drop-in for fastchess and cutechess-cli\")", a.flag, d)
		}
	}
	if inv.Version || inv.Help {
		return inv, nil
	}
	if d == Fastchess {
		// fastchess plays every game of a round from the round's opening.
		p.repeat = f.Games
	} else if p.repeat == 0 {
		p.repeat = 1 // cutechess-cli: a new opening every game unless -repeat
	}
	f.Repeat = p.repeat
	if err := engineSpecs(inv, p.engines, p.each); err != nil {
		return nil, err
	}
	if p.openings != nil {
		s, err := openingsFlag(p.openings, p.openingsOrder, d, p.seedGiven, p.seed)
		if err != nil {
			return nil, err
		}
		f.Openings = s
		inv.ShuffledBook = d == Fastchess && p.openings["order"] == "random"
	}
	f.RatingInterval = inv.RatingInterval
	return inv, nil
}

// parser is Parse's state while it reads the options one by one.
type parser struct {
	d             Dialect
	inv           *Invocation
	f             *matchplan.Flags
	engines       []engineArgs
	each          []string
	repeat        int
	seedGiven     bool
	seed          uint64
	openings      map[string]string
	openingsOrder []string
}

// arg is one option as the parser reads it: flag is its name with the
// dash, as errors name it.
type arg struct {
	option
	flag string
}

func (a arg) kv(known ...string) (map[string]string, []string, error) {
	return keyValues(a.flag, a.values, known)
}

func (a arg) one() (string, error) {
	if len(a.values) != 1 {
		return "", fmt.Errorf("%s: want one value (got %d: %s)", a.flag, len(a.values), strings.Join(a.values, " "))
	}
	return a.values[0], nil
}

func (a arg) none() error {
	if len(a.values) > 0 {
		return fmt.Errorf("%s takes no value (got %q)", a.flag, a.values[0])
	}
	return nil
}

func (a arg) integer(min int) (int, error) {
	v, err := a.one()
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		return 0, fmt.Errorf("%s: %q: want an integer of at least %d", a.flag, clip(v), min)
	}
	return n, nil
}

// scheduleOption reads the engines, the schedule and the version and help; false: not one of these options.
func (p *parser) scheduleOption(a arg) (bool, error) {
	inv, f, d := p.inv, p.f, p.d
	switch a.name {
	case "version", "v":
		inv.Version = true
	case "help", "h":
		inv.Help = true
	case "engine":
		if len(a.values) == 0 {
			return true, fmt.Errorf("-engine: no settings (want cmd=PATH [name=NAME] ...)")
		}
		p.engines = append(p.engines, engineArgs{values: a.values})
	case "each":
		if len(a.values) == 0 {
			return true, fmt.Errorf("-each: no settings")
		}
		p.each = append(p.each, a.values...)
	case "quick":
		m, _, err := a.kv("cmd", "book")
		if err != nil {
			return true, err
		}
		var cmds []string
		for _, v := range a.values {
			if c, ok := strings.CutPrefix(v, "cmd="); ok {
				cmds = append(cmds, c)
			}
		}
		if len(cmds) != 2 {
			return true, fmt.Errorf("-quick: want exactly two cmd= (got %d)", len(cmds))
		}
		if m["book"] == "" {
			return true, fmt.Errorf("-quick: missing book=FILE")
		}
		// fastchess's -quick: 10+0.1, 25000 rounds of pairs, random
		// book order, draw adjudication, recover, cutechess output.
		n1, n2 := baseName(cmds[0]), baseName(cmds[1])
		if n1 == n2 {
			n1, n2 = n1+"1", n2+"2"
		}
		p.engines = append(p.engines, engineArgs{values: []string{"cmd=" + cmds[0], "name=" + n1, "tc=10+0.1"}},
			engineArgs{values: []string{"cmd=" + cmds[1], "name=" + n2, "tc=10+0.1"}})
		p.openings = map[string]string{"file": m["book"], "order": "random"}
		p.openingsOrder = []string{"file", "order"}
		f.Games, f.Rounds, p.repeat = 2, 25000, 2
		f.Recover = true
		f.Draw = "movenumber=30,movecount=8,score=8"
		inv.Output = "cutechess"
	case "rounds":
		n, err := a.integer(1)
		if err != nil {
			return true, err
		}
		f.Rounds = n
	case "games":
		n, err := a.integer(1)
		if err != nil {
			return true, err
		}
		f.Games = n
	case "repeat":
		n := 2
		if len(a.values) > 0 {
			var err error
			if n, err = a.integer(1); err != nil {
				return true, err
			}
		}
		if d == Fastchess {
			f.Games = n // fastchess: -repeat N is -games N
		}
		p.repeat = n
	case "concurrency":
		n, err := a.integer(1)
		if err != nil {
			return true, err
		}
		f.Concurrency = n
	case "force-concurrency":
		// arbiter never caps concurrency at the hardware threads.
		if err := a.none(); err != nil {
			return true, err
		}
	case "tournament":
		v, err := a.one()
		if err != nil {
			return true, err
		}
		switch v {
		case "roundrobin", "round-robin", "gauntlet":
			f.Tournament = v
		default:
			return true, fmt.Errorf("-tournament %s: want roundrobin or gauntlet (%s and knockout are not supported)", clip(v), "pyramid")
		}
	case "seeds":
		n, err := a.integer(1)
		if err != nil {
			return true, err
		}
		f.Seeds = n
	default:
		return false, nil
	}
	return true, nil
}

// gameOption reads openings, SPRT, adjudication and tablebases; false: not one of these options.
func (p *parser) gameOption(a arg) (bool, error) {
	f, d := p.f, p.d
	switch a.name {
	case "openings":
		m, order, err := a.kv("file", "format", "order", "plies", "start", "policy")
		if err != nil {
			return true, err
		}
		if p, ok := m["policy"]; ok && p != "default" {
			return true, fmt.Errorf("-openings policy=%s: only policy=default (a new opening per game pair) is supported", clip(p))
		}
		p.openings, p.openingsOrder = m, order
	case "srand":
		v, err := a.one()
		if err != nil {
			return true, err
		}
		if p.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return true, fmt.Errorf("-srand: %q: want a non-negative integer", clip(v))
		}
		p.seedGiven = true
	case "sprt":
		m, order, err := a.kv("elo0", "elo1", "alpha", "beta", "model")
		if err != nil {
			return true, err
		}
		if m["model"] == "bayesian" {
			m["model"] = "bayeselo"
		}
		if _, ok := m["model"]; !ok && d == Cutechess {
			// cutechess-cli's SPRT is in BayesElo.
			m["model"], order = "bayeselo", append(order, "model")
		}
		f.SPRT = joinKV(m, order)
	case "draw":
		m, order, err := a.kv("movenumber", "movecount", "score")
		if err != nil {
			return true, err
		}
		if _, ok := m["movecount"]; !ok {
			m["movecount"], order = "1", append(order, "movecount") // fastchess's default
		}
		f.Draw = joinKV(m, order)
	case "resign":
		m, order, err := a.kv("movecount", "score", "twosided")
		if err != nil {
			return true, err
		}
		if m["twosided"] == "true" {
			return true, fmt.Errorf("-resign twosided=true: only one-sided resign adjudication (the loser's score and the winner's agree) is supported")
		}
		delete(m, "twosided")
		order = slices.DeleteFunc(order, func(k string) bool { return k == "twosided" })
		if _, ok := m["movecount"]; !ok {
			m["movecount"], order = "1", append(order, "movecount")
		}
		f.Resign = joinKV(m, order)
	case "tb":
		v, err := a.one()
		if err != nil {
			return true, err
		}
		if strings.ContainsAny(v, ";") {
			return true, fmt.Errorf("-tb %s: give one tablebase directory (a ;-separated list is not supported)", clip(v))
		}
		f.TB = v
	case "tbpieces":
		n, err := a.integer(3)
		if err != nil {
			return true, err
		}
		f.TBPieces = n
	case "tbadjudicate":
		v, err := a.one()
		if err != nil {
			return true, err
		}
		if _, err := match.ParseTBResults(v); err != nil {
			return true, fmt.Errorf("-tbadjudicate: %v", err)
		}
		f.TBAdjudicate = v
	case "tbignore50":
		if err := a.none(); err != nil {
			return true, err
		}
		f.TBIgnore50 = true
	default:
		return false, nil
	}
	return true, nil
}

// playOption reads how games are played: the move cap, recovery, colours
// and the variant; false: not one of these options.
func (p *parser) playOption(a arg) (bool, error) {
	inv, f := p.inv, p.f
	switch a.name {
	case "maxmoves":
		n, err := a.integer(1)
		if err != nil {
			return true, err
		}
		f.MaxMoves = n
	case "recover":
		if err := a.none(); err != nil {
			return true, err
		}
		f.Recover = true
	case "noswap", "reverse":
		if err := a.none(); err != nil {
			return true, err
		}
		if a.name == "noswap" {
			f.NoSwap = true
		} else {
			f.Reverse = true
		}
	case "variant":
		v, err := a.one()
		if err != nil {
			return true, err
		}
		switch v {
		case "standard":
		case "fischerandom", "frc", "chess960":
			inv.Notes = append(inv.Notes, "-variant "+v+": a game is Chess960 when its opening position is (arbiter reads the variant from the book's positions)")
		default:
			return true, fmt.Errorf("-variant %s: want standard or fischerandom", clip(v))
		}
	default:
		return false, nil
	}
	return true, nil
}

// reportOption reads what is printed and written: tags, intervals, report format, PGN and EPD files; false: not one of these options.
func (p *parser) reportOption(a arg) (bool, error) {
	inv, f := p.inv, p.f
	switch a.name {
	case "event":
		f.Event = strings.Join(a.values, " ")
	case "site":
		inv.Site = strings.Join(a.values, " ")
	case "ratinginterval":
		n, err := a.integer(0)
		if err != nil {
			return true, err
		}
		inv.RatingInterval = n
	case "scoreinterval":
		n, err := a.integer(1)
		if err != nil {
			return true, err
		}
		inv.ScoreInterval = n
	case "autosaveinterval":
		n, err := a.integer(0)
		if err != nil {
			return true, err
		}
		inv.AutosaveInterval = n
	case "report":
		m, _, err := a.kv("penta")
		if err != nil {
			return true, err
		}
		b, err := boolValue("-report penta", m["penta"])
		if err != nil {
			return true, err
		}
		inv.Penta = b
	case "output":
		m, _, err := a.kv("format")
		if err != nil {
			return true, err
		}
		switch m["format"] {
		case "fastchess", "cutechess":
			inv.Output = m["format"]
		default:
			return true, fmt.Errorf("-output format=%s: want fastchess or cutechess", clip(m["format"]))
		}
	case "pgnout":
		if err := inv.pgnout(a.values); err != nil {
			return true, err
		}
	case "epdout":
		if err := inv.epdout(a.values); err != nil {
			return true, err
		}
	default:
		return false, nil
	}
	return true, nil
}

// runOption reads state files, log, checks and timeouts; false: not one of these options.
func (p *parser) runOption(a arg) (bool, error) {
	inv := p.inv
	switch a.name {
	case "config":
		m, _, err := a.kv("file", "discard", "outname", "stats")
		if err != nil {
			return true, err
		}
		if v, ok := m["outname"]; ok {
			if v == "" {
				return true, fmt.Errorf("-config outname=: empty")
			}
			inv.StateFile = v
		}
		discard, err := boolValue("-config discard", orDefault(m["discard"], "false"))
		if err != nil {
			return true, err
		}
		stats, err := boolValue("-config stats", orDefault(m["stats"], "true"))
		if err != nil {
			return true, err
		}
		if file := m["file"]; file != "" && !discard {
			if !stats {
				return true, fmt.Errorf("-config stats=false: a saved match resumes with its results (give discard=true to start afresh)")
			}
			inv.Resume = file
		}
	case "log":
		m, _, err := a.kv("file", "level", "append", "compress", "realtime", "engine")
		if err != nil {
			return true, err
		}
		if m["engine"] == "true" {
			return true, fmt.Errorf("-log engine=true: engine communication logs are not supported")
		}
		if m["compress"] == "true" {
			return true, fmt.Errorf("-log compress=true: compressed logs are not supported")
		}
		if m["file"] == "" {
			return true, fmt.Errorf("-log: missing file=NAME")
		}
		inv.LogFile = m["file"]
		inv.Notes = append(inv.Notes, "-log file="+m["file"]+": receives a copy of the output lines (arbiter does not log engine traffic)")
	case "crc32":
		m, _, err := a.kv("pgn")
		if err != nil {
			return true, err
		}
		b, err := boolValue("-crc32 pgn", m["pgn"])
		if err != nil {
			return true, err
		}
		inv.CRC32 = b
	case "testEnv":
		// fastchess writes a PV warning's lines as one, joined by " :: ".
		if err := a.none(); err != nil {
			return true, err
		}
		inv.TestEnv = true
	case "check-mate-pvs":
		if err := a.none(); err != nil {
			return true, err
		}
		inv.CheckMatePVs = true
	case "strict":
		if err := a.none(); err != nil {
			return true, err
		}
		inv.Strict = true
	case "wait":
		n, err := a.integer(0)
		if err != nil {
			return true, err
		}
		inv.Wait = time.Duration(n) * time.Millisecond
	case "startup-ms", "ping-ms":
		n, err := a.integer(1)
		if err != nil {
			return true, err
		}
		if a.name == "startup-ms" {
			inv.StartupTimeout = time.Duration(n) * time.Millisecond
		} else {
			inv.ReadyTimeout = time.Duration(n) * time.Millisecond
		}
	default:
		return false, nil
	}
	return true, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// fastchessNames makes the engines' names unique as fastchess 1.8.2
// does: the second engine of a name gets "_2" appended, the third "_3".
func fastchessNames(specs []enginespec.Spec) {
	seen := map[string]int{}
	for i := range specs {
		n := seen[specs[i].Name]
		seen[specs[i].Name]++
		if n > 0 {
			specs[i].Name += "_" + strconv.Itoa(n+1)
		}
	}
}

// pathStem is C++'s std::filesystem::path(cmd).stem(): the file name
// without its last extension ("./bin/sf.exe" is "sf", ".hidden" stays).
func pathStem(cmd string) string {
	if strings.HasSuffix(cmd, "/") || strings.HasSuffix(cmd, string(filepath.Separator)) {
		return "" // a directory: no file name
	}
	name := filepath.Base(cmd)
	if name == "." || name == ".." {
		return name
	}
	if i := strings.LastIndex(name, "."); i > 0 {
		return name[:i]
	}
	return name
}

func baseName(cmd string) string {
	return strings.TrimSuffix(filepath.Base(cmd), ".exe")
}

func boolValue(what, v string) (bool, error) {
	switch v {
	case "true", "on", "yes":
		return true, nil
	case "false", "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("%s=%s: want true or false", what, clip(v))
}

// keyValues reads an option's key=value groups, refusing a key not known.
func keyValues(name string, values, known []string) (map[string]string, []string, error) {
	m := map[string]string{}
	var order []string
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			return nil, nil, fmt.Errorf("%s: %q is not key=value (known keys: %s)", name, clip(v), strings.Join(known, ", "))
		}
		if !slices.Contains(known, k) {
			return nil, nil, fmt.Errorf("%s: unknown key %s= (known: %s)", name, clip(k), strings.Join(known, ", "))
		}
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = val
	}
	return m, order, nil
}

func joinKV(m map[string]string, order []string) string {
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// openingsFlag is -openings as matchplan's --openings: fastchess counts
// start= from 1, matchplan skips that many less. fastchess's order=random
// is matchplan's order=fastchess (its own shuffle, so that the same -srand
// plays the same openings in the same order); cutechess-cli's draws
// openings with a generator of its own and stays arbiter's random.
func openingsFlag(m map[string]string, order []string, d Dialect, seedGiven bool, seed uint64) (string, error) {
	if m["file"] == "" {
		return "", fmt.Errorf("-openings: missing file=NAME")
	}
	out := []string{"file=" + quoteValue(m["file"])}
	for _, k := range order {
		v := m[k]
		switch k {
		case "file", "policy":
		case "format":
			if v != "epd" && v != "pgn" {
				return "", fmt.Errorf("-openings format=%s: want epd or pgn", clip(v))
			}
			out = append(out, "format="+v)
		case "order":
			if v != "random" && v != "sequential" {
				return "", fmt.Errorf("-openings order=%s: want sequential or random", clip(v))
			}
			if v == "random" && d == Fastchess {
				v = "fastchess"
			}
			out = append(out, "order="+v)
		case "plies":
			out = append(out, "plies="+v)
		case "start":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return "", fmt.Errorf("-openings start=%s: want an integer of at least 1 (the first opening is 1)", clip(v))
			}
			out = append(out, "start="+strconv.Itoa(n-1))
		}
	}
	if m["order"] == "random" {
		if !seedGiven {
			// fastchess draws a seed when -srand is not given.
			seed = uint64(time.Now().UnixNano())
		}
		out = append(out, "seed="+strconv.FormatUint(seed, 10))
	}
	return strings.Join(out, ","), nil
}

// quoteValue quotes a value for matchplan's comma-separated groups.
func quoteValue(v string) string {
	if !strings.ContainsAny(v, `,"`) {
		return v
	}
	return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
}

func (inv *Invocation) pgnout(values []string) error {
	if len(values) == 0 {
		return fmt.Errorf("-pgnout: missing file=NAME")
	}
	if !strings.Contains(values[0], "=") {
		// cutechess-cli: -pgnout FILE [min] [fi]
		inv.Flags.PGNOut = values[0]
		for _, v := range values[1:] {
			return fmt.Errorf("-pgnout %s %s: cutechess-cli's %q PGN form is not supported (arbiter writes full PGNs)", values[0], v, v)
		}
		return nil
	}
	m, _, err := keyValues("-pgnout", values, []string{"file", "notation", "append", "nodes", "seldepth", "nps", "hashfull", "tbhits", "pv", "timeleft", "latency", "min", "match_line"})
	if err != nil {
		return err
	}
	for _, k := range []string{"nps", "hashfull", "tbhits", "pv", "latency", "min"} {
		if v, ok := m[k]; ok {
			b, err := boolValue("-pgnout "+k, v)
			if err != nil {
				return err
			}
			if b {
				return fmt.Errorf("-pgnout %s=true: not supported (move comments carry score/depth, time and, with timeleft=true, nodes=true and seldepth=true, tl=, n= and sd=)", k)
			}
		}
	}
	if n, ok := m["notation"]; ok && n != "san" {
		return fmt.Errorf("-pgnout notation=%s: only san is supported", clip(n))
	}
	if v, ok := m["nodes"]; ok {
		if inv.PGNNodes, err = boolValue("-pgnout nodes", v); err != nil {
			return err
		}
	}
	if v, ok := m["append"]; ok {
		if inv.PGNAppend, err = boolValue("-pgnout append", v); err != nil {
			return err
		}
	}
	if v, ok := m["timeleft"]; ok {
		if inv.PGNTimeLeft, err = boolValue("-pgnout timeleft", v); err != nil {
			return err
		}
	}
	if v, ok := m["seldepth"]; ok {
		if inv.PGNSelDepth, err = boolValue("-pgnout seldepth", v); err != nil {
			return err
		}
	}
	if v, ok := m["match_line"]; ok {
		// OpenBench passes match_line= to keep an engine's "info string
		// pgncomment" lines; the games and results are the same without.
		inv.Notes = append(inv.Notes, fmt.Sprintf("-pgnout match_line=%s: engine output lines are not copied into the PGN", clip(v)))
	}
	inv.Flags.PGNOut = m["file"]
	if inv.Flags.PGNOut == "" {
		inv.Flags.PGNOut = "fastchess_" + time.Now().Format("20060102_150405") + ".pgn"
	}
	return nil
}

func (inv *Invocation) epdout(values []string) error {
	if len(values) == 0 {
		return fmt.Errorf("-epdout: missing file=NAME")
	}
	if !strings.Contains(values[0], "=") {
		if len(values) > 1 {
			return fmt.Errorf("-epdout: want one file name (got %d values)", len(values))
		}
		inv.EPDOut = values[0]
		return nil
	}
	m, _, err := keyValues("-epdout", values, []string{"file", "append"})
	if err != nil {
		return err
	}
	if v, ok := m["append"]; ok {
		if inv.EPDAppend, err = boolValue("-epdout append", v); err != nil {
			return err
		}
	}
	inv.EPDOut = m["file"]
	if inv.EPDOut == "" {
		inv.EPDOut = "fastchess_" + time.Now().Format("20060102_150405") + ".epd"
	}
	return nil
}

// engineArgs is one -engine's words.
type engineArgs struct{ values []string }

// engineKeys are the keys of -engine and -each.
var engineKeys = []string{"cmd", "name", "args", "arg", "tc", "st", "nodes", "plies", "depth", "timemargin", "restart", "proto", "dir", "option.NAME"}

// refusedEngineKeys are cutechess-cli's engine settings arbiter does not
// have.
var refusedEngineKeys = map[string]string{
	"conf":      "engines.json configurations are not read (give cmd=, name=, option.X=)",
	"book":      "polyglot books are not supported (use -openings with an EPD or PGN file)",
	"bookdepth": "polyglot books are not supported",
	"initstr":   "start-up strings are not supported",
	"stderr":    "redirecting an engine's standard error is not supported",
	"whitepov":  "scores from white's point of view are not supported",
	"ponder":    "pondering is not supported",
	"trust":     "result claims are never trusted: the runner judges every game's end",
	"tscale":    "timeout scaling is not supported (see -startup-ms, -ping-ms)",
	"debug":     "debug output is not supported",
}

// engineBuild is one engine's spec as its -each and -engine words set
// it: the spec, its limits, its time margin (-1: none given).
type engineBuild struct {
	spec   enginespec.Spec
	limits []enginespec.Setting
	margin int
}

// apply reads words (key=value), where naming them in errors.
func (b *engineBuild) apply(words []string, where string) error {
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if why, bad := refusedEngineKeys[k]; bad {
			return fmt.Errorf("%s: %s: %s", where, clip(w), why)
		}
		if !ok {
			return fmt.Errorf("%s: %q is not key=value (known keys: %s)", where, clip(w), strings.Join(engineKeys, ", "))
		}
		switch {
		case k == "cmd":
			b.spec.Cmd = v
		case k == "name":
			b.spec.Name = v
		case k == "args":
			b.spec.Args = append(b.spec.Args, strings.Fields(v)...)
		case k == "arg":
			b.spec.Args = append(b.spec.Args, v) // cutechess-cli: one argument

		case k == "dir":
			b.spec.Dir = v
		case k == "proto":
			switch v {
			case "uci":
				b.spec.Proto = enginespec.UCI
			case "xboard", "cecp":
				b.spec.Proto = enginespec.Xboard
			default:
				return fmt.Errorf("%s: proto=%s: want uci or xboard", where, clip(v))
			}
		case strings.HasPrefix(k, "option."):
			name := strings.TrimPrefix(k, "option.")
			if name == "" {
				return fmt.Errorf("%s: option.=: missing the option's name", where)
			}
			b.spec.SetOption(name, v)
		case k == "tc", k == "st", k == "nodes", k == "depth", k == "plies":
			if k == "plies" {
				k = "depth"
			}
			b.limits = slices.DeleteFunc(b.limits, func(l enginespec.Setting) bool { return l.Key == k })
			b.limits = append(b.limits, enginespec.Setting{Key: k, Value: v})
		case k == "timemargin":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%s: timemargin=%s: want non-negative milliseconds", where, clip(v))
			}
			b.margin = n
		case k == "restart":
			switch v {
			case "off", "false", "auto":
			case "on", "true":
				return fmt.Errorf("%s: restart=on: restarting an engine for every game is not supported (engines are restarted only after a crash, with -recover)", where)
			default:
				return fmt.Errorf("%s: restart=%s: want on or off", where, clip(v))
			}
		default:
			return fmt.Errorf("%s: unknown key %s= (known: %s)", where, clip(k), strings.Join(engineKeys, ", "))
		}
	}
	return nil
}

// engineSpecs turns the -engine and -each settings into matchplan's
// --engine specs (each engine's own settings over -each's).
func engineSpecs(inv *Invocation, engines []engineArgs, each []string) error {
	f := &inv.Flags
	margin := -1
	unnamed := map[string]int{}
	var specs []enginespec.Spec
	for i, e := range engines {
		b := engineBuild{margin: -1}
		label := fmt.Sprintf("-engine #%d", i+1)
		if err := b.apply(each, "-each"); err != nil {
			return err
		}
		if b.spec.Cmd != "" || b.spec.Name != "" {
			return fmt.Errorf("-each: cmd= and name= belong to one -engine")
		}
		if err := b.apply(e.values, label); err != nil {
			return err
		}
		if b.spec.Cmd == "" {
			return fmt.Errorf("%s: missing cmd=", label)
		}
		if b.spec.Name == "" && inv.Dialect == Fastchess {
			// fastchess 1.8.2 names an engine after its command's stem
			// (file name without its extension); fastchessNames then
			// tells apart engines of one name.
			b.spec.Name = pathStem(b.spec.Cmd)
			if b.spec.Name == "" {
				return fmt.Errorf("%s: cmd=%s: no file name to name the engine after (give name=)", label, clip(b.spec.Cmd))
			}
		}
		if b.spec.Name == "" {
			// cutechess-cli: two of one command get 1, 2, ... appended.
			b.spec.Name = baseName(b.spec.Cmd)
			if unnamed[b.spec.Name]++; unnamed[b.spec.Name] > 1 {
				b.spec.Name += strconv.Itoa(unnamed[b.spec.Name])
			}
		}
		if hasLimit(b.limits, "st") && hasLimit(b.limits, "tc") && !tcInf(b.limits) {
			return fmt.Errorf("-engine %s: tc= and st= exclude each other", b.spec.Name)
		}
		b.spec.Limits = b.limits
		if b.margin >= 0 {
			if margin >= 0 && margin != b.margin {
				return fmt.Errorf("-engine %s: timemargin=%d differs from another engine's %d: arbiter has one time margin for the match", b.spec.Name, b.margin, margin)
			}
			margin = b.margin
		}
		specs = append(specs, b.spec)
	}
	if inv.Dialect == Fastchess {
		fastchessNames(specs)
	}
	for _, s := range specs {
		f.Engines = append(f.Engines, s.String())
	}
	if margin >= 0 {
		f.TimeMargin = margin
	}
	return nil
}

func hasLimit(l []enginespec.Setting, k string) bool {
	return slices.ContainsFunc(l, func(s enginespec.Setting) bool { return s.Key == k })
}

func tcInf(l []enginespec.Setting) bool {
	return slices.ContainsFunc(l, func(s enginespec.Setting) bool { return s.Key == "tc" && s.Value == "inf" })
}
