package fastchesscli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
	"github.com/arbiter-chess/arbiter/sprt"
)

// ErrUsage marks an error as bad input (the caller's exit status 2).
var ErrUsage = errors.New("usage")

type usageErr struct{ error }

func (u usageErr) Unwrap() []error { return []error{u.error, ErrUsage} }

func usage(format string, args ...any) error { return usageErr{fmt.Errorf(format, args...)} }

// RunOptions are what the match plays with and where it reports.
type RunOptions struct {
	Stdout, Stderr io.Writer
	Builtin        match.BuiltinFactory
	// Version is what -version prints.
	Version string
	// Tune, if set, is given the checked plan before the first game (the
	// command fits GOMAXPROCS and scheduling to it, as `arbiter match`
	// does).
	Tune func(*matchplan.Plan)
}

// Run plays the match inv describes, printing fastchess's (or
// cutechess-cli's) lines. An error wrapping ErrUsage is bad input; any
// other is the match's failure (an engine failed without -recover, a file
// could not be written).
func Run(ctx context.Context, inv *Invocation, o RunOptions) error {
	if inv.Version || inv.Help {
		printAbout(inv, o)
		return nil
	}
	flags, resume, stateFile, err := loadConfig(inv)
	if err != nil {
		return err
	}
	pgnName := flags.PGNOut // as given: fastchess's CRC32 line names it so
	if flags.PGNOut != "" {
		if abs, err := filepath.Abs(flags.PGNOut); err == nil {
			flags.PGNOut = abs
		}
	}
	plan, err := matchplan.Parse(flags)
	if err != nil {
		return usage("%v", err)
	}
	if o.Tune != nil {
		o.Tune(plan)
	}
	for _, n := range inv.Notes {
		fmt.Fprintf(o.Stderr, "arbiter: note: %s\n", n)
	}
	if inv.ShuffledBook {
		fmt.Fprintln(o.Stdout, "Indexing opening suite...") // fastchess, as it shuffles the book
	}
	r := &matchRun{ctx: ctx, inv: inv, flags: flags, plan: plan, resume: resume, stateFile: stateFile, pgnName: pgnName}
	r.engineSettings()
	out, closeOutputs, err := r.openOutputs(o.Stdout)
	if err != nil {
		return err
	}
	defer closeOutputs()
	t, err := r.tournament(out, o.Builtin)
	if err != nil {
		return err
	}
	st, err := t.Run(ctx)
	if err != nil {
		if st == nil {
			return usage("%v", err)
		}
		return err
	}
	return r.finish(st, out)
}

// printAbout answers -version and -help.
func printAbout(inv *Invocation, o RunOptions) {
	switch {
	case inv.Version && inv.Dialect == Fastchess:
		printVersion(o.Stdout, o.Version)
	case inv.Version:
		fmt.Fprintf(o.Stdout, "arbiter %s (fastchess and cutechess-cli command lines)\n", o.Version)
	default:
		fmt.Fprintln(o.Stdout, "arbiter match in fastchess/cutechess-cli mode: the options of fastchess 1.8 and cutechess-cli; see docs/match.md, \"Drop-in for fastchess and cutechess-cli\"")
	}
}

// loadConfig is the match's flags, with -config file= read: a state this
// mode saved (resumed: the state and its file are returned too), or a
// fastchess-style config.json (played).
func loadConfig(inv *Invocation) (flags matchplan.Flags, resume *match.State, stateFile string, err error) {
	flags = inv.Flags
	if inv.AutosaveInterval > 0 {
		stateFile = inv.StateFile
	}
	if inv.Resume == "" {
		return flags, nil, stateFile, nil
	}
	b, err := os.ReadFile(inv.Resume)
	if err != nil {
		return flags, nil, "", usage("-config file=%s: %v", inv.Resume, err)
	}
	var probe struct {
		Format     string          `json:"format"`
		ConfigName json.RawMessage `json:"config_name"`
	}
	json.Unmarshal(b, &probe)
	var c *matchplan.Config
	if probe.ConfigName != nil {
		return flags, nil, "", usage("-config file=%s: a config.json that fastchess wrote: its saved games and settings cannot be resumed by arbiter; start the match again with its command line", inv.Resume)
	}
	if probe.Format != "" {
		st, err := match.LoadState(inv.Resume)
		if err != nil {
			return flags, nil, "", usage("-config file=%s: %v", inv.Resume, err)
		}
		if st.Status == match.StatusComplete || st.Status == match.StatusStopped {
			return flags, nil, "", usage("-config file=%s: the match is %s (%d games): nothing to play", inv.Resume, st.Status, st.GamesDone)
		}
		if c, err = matchplan.ParseConfig(st.Config, "-config file="+inv.Resume); err != nil {
			return flags, nil, "", usage("%v", err)
		}
		resume, stateFile = st, inv.Resume
	} else if c, err = matchplan.ParseConfig(b, "-config file="+inv.Resume); err != nil {
		return flags, nil, "", usage("%v", err)
	}
	if flags, err = c.Flags(flags); err != nil {
		return flags, nil, "", usage("-config file=%s: %v", inv.Resume, err)
	}
	return flags, resume, stateFile, nil
}

// matchRun is one run of a parsed command line: its plan, where it
// reports, and what -strict stopped it for.
type matchRun struct {
	ctx       context.Context
	inv       *Invocation
	flags     matchplan.Flags
	plan      *matchplan.Plan
	resume    *match.State
	stateFile string
	pgnName   string // -pgnout file= as given

	engineOpts *engineOptions // the fastchess dialect's option warnings; nil otherwise
	epd        *epdWriter
	rep        *reporter
	paired     bool // the report counts game pairs (-report penta=true on a paired schedule)

	strictMu      sync.Mutex
	strictFailure string
}

// engineSettings applies the command line's engine-wide settings.
func (r *matchRun) engineSettings() {
	if r.inv.Dialect == Fastchess {
		// As fastchess: an option the engine cannot take is a warning
		// with every game, not a refusal.
		r.engineOpts = newEngineOptions(len(r.plan.Engines))
	}
	for i := range r.plan.Engines {
		e := &r.plan.Engines[i]
		if r.engineOpts != nil {
			e.ChooseOptions = r.engineOpts.chooser(i)
		}
		if r.inv.StartupTimeout > 0 {
			e.StartTimeout = r.inv.StartupTimeout
		}
		if r.inv.ReadyTimeout > 0 {
			e.ReadyTimeout = r.inv.ReadyTimeout
		}
	}
}

// openOutputs empties the PGN file unless appended to or resumed, and
// opens the -log copy (the returned writer) and the -epdout file.
func (r *matchRun) openOutputs(stdout io.Writer) (io.Writer, func(), error) {
	inv := r.inv
	if r.resume == nil && r.flags.PGNOut != "" && !inv.PGNAppend {
		if err := os.WriteFile(r.flags.PGNOut, nil, 0o644); err != nil {
			return nil, nil, fmt.Errorf("-pgnout: %v", err)
		}
	}
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	out := stdout
	if inv.LogFile != "" {
		lf, err := os.OpenFile(inv.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, usage("-log file=%s: %v", inv.LogFile, err)
		}
		closers = append(closers, lf)
		out = io.MultiWriter(out, lf)
	}
	if inv.EPDOut != "" {
		mode := os.O_CREATE | os.O_WRONLY | os.O_APPEND
		if !inv.EPDAppend && r.resume == nil {
			mode |= os.O_TRUNC
		}
		ef, err := os.OpenFile(inv.EPDOut, mode, 0o644)
		if err != nil {
			closeAll()
			return nil, nil, usage("-epdout: %v", err)
		}
		closers = append(closers, ef)
		r.epd = &epdWriter{w: ef}
	}
	return out, closeAll, nil
}

// tournament is the match to play, with the reporter and its hooks.
func (r *matchRun) tournament(out io.Writer, builtin match.BuiltinFactory) (*match.Tournament, error) {
	plan, inv, cfg := r.plan, r.inv, r.plan.Config
	if inv.Site != "" {
		cfg.PGNOptions.Site = inv.Site
	}
	cfg.PGNOptions.Nodes, cfg.PGNOptions.SelDepth, cfg.PGNOptions.TimeLeft = inv.PGNNodes, inv.PGNSelDepth, inv.PGNTimeLeft
	if inv.Dialect == Fastchess {
		// fastchess's PGN, byte for byte but for the clock's values.
		cfg.PGNOptions.Fastchess, cfg.PGNOptions.Reason = true, reason
		if inv.Site == "" {
			cfg.PGNOptions.Site = "?" // fastchess's, not the host's name
		}
	}
	stateConfig, err := json.Marshal(matchplan.ConfigOf(plan))
	if err != nil {
		return nil, err
	}
	r.rep = &reporter{out: out, inv: inv, total: plan.Schedule.Len(), sprt: plan.SPRT, options: r.engineOpts}
	r.paired = plan.Schedule.Paired() && inv.Penta
	if inv.Output == "fastchess" && len(plan.Engines) == 2 {
		r.rep.board = &fastchessBoard{penta: r.paired, interval: inv.RatingInterval, total: plan.Schedule.Len(), firstOfPair: map[int]fastchessStats{}}
	}
	t := &match.Tournament{
		Engines: plan.Engines, Schedule: plan.Schedule, Limits: cfg.Limits, Game: cfg.Game,
		Openings: cfg.Openings, Concurrency: cfg.Concurrency, Recover: r.flags.Recover,
		// As fastchess: games lost to crashes are played and counted (the
		// farms judge them), not a reason to stop.
		PlayAbandoned: true,
		PGNFile:       r.flags.PGNOut, PGNOptions: cfg.PGNOptions,
		StateFile: r.stateFile, StateConfig: stateConfig, Resume: r.resume,
		Builtin: builtin,
	}
	if t.PGNFile == "" {
		t.PGN = io.Discard
	}
	if inv.Dialect == Fastchess {
		t.NewPlayer = r.fastchessPlayer(builtin)
	}
	t.OnStart = func(st *match.Standings) { r.onStart(st, cfg) }
	t.OnGameStart = r.onGameStart
	t.OnGameEnd = r.onGameEnd
	t.OnUnit = r.unitHook()
	return t, nil
}

// fastchessPlayer starts an engine as the runner does and, for a UCI
// engine, reads its info lines as fastchess does (pvcheck.go).
func (r *matchRun) fastchessPlayer(builtin match.BuiltinFactory) func(match.EngineConfig) (match.Player, error) {
	claims := &claimBoard{}
	warn := func(lines string) {
		r.rep.line(lines)
		if r.inv.Strict {
			first, _, _ := strings.Cut(lines, "\n")
			r.strictStop(first)
		}
	}
	return func(e match.EngineConfig) (match.Player, error) {
		p, err := match.NewPlayer(e, builtin)
		if _, uci := p.(*match.UCIPlayer); !uci || err != nil {
			return p, err
		}
		f := newFastchessPlayer(p, e.Name, r.inv.CheckMatePVs, r.inv.TestEnv, warn)
		f.claims = claims
		return f, nil
	}
}

// progress is what the report interval counts: pairs or games.
func (r *matchRun) progress(st *match.Standings) int {
	if r.paired {
		return st.Games / 2
	}
	return st.Games
}

func (r *matchRun) onStart(st *match.Standings, cfg match.MatchConfig) {
	rep := r.rep
	rep.names = st.Engines
	if len(st.Engines) >= 2 {
		rep.details = details(r.plan.Engines, cfg.Limits, r.plan.BookName, r.engineOpts)
	}
	rep.printed = r.progress(st)
	if rep.board != nil && r.resume != nil {
		rep.board.seed(rep.results(st), st.Games)
	}
	if r.inv.CRC32 && r.flags.PGNOut != "" {
		rep.crc = newPGNCRC(r.pgnName, r.flags.PGNOut, cfg.PGNOptions)
	}
	if r.resume != nil {
		rep.line(fmt.Sprintf("Resuming after %d games from %s", st.Games, r.stateFile))
	}
}

// strictStop records the first reason -strict stops the match for.
func (r *matchRun) strictStop(reason string) {
	r.strictMu.Lock()
	defer r.strictMu.Unlock()
	if r.strictFailure == "" {
		r.strictFailure = reason
	}
}

func (r *matchRun) strictStopped() string {
	r.strictMu.Lock()
	defer r.strictMu.Unlock()
	return r.strictFailure
}

func (r *matchRun) onGameStart(i int, white, black string) {
	warnings := r.rep.started(i, white, black)
	if r.inv.Strict && len(warnings) > 0 {
		// fastchess -strict stops at its first warning line.
		r.strictStop(fmt.Sprintf("game %d: %s", i+1, warnings[0]))
	}
}

func (r *matchRun) onGameEnd(i int, g *match.GameRecord) {
	r.rep.ended(i, g)
	if r.inv.Strict {
		for _, inc := range g.Incidents {
			if inc.Kind != match.IncOverrun && inc.Kind != match.IncRestart {
				r.strictStop(fmt.Sprintf("game %d: %s", i+1, inc))
			}
		}
	}
	if r.epd != nil {
		r.epd.write(g)
	}
	if r.inv.Wait > 0 {
		// Called by the slot that played the game: its next game
		// waits, the others do not.
		select {
		case <-time.After(r.inv.Wait):
		case <-r.ctx.Done():
		}
	}
}

// unitHook is the tournament's OnUnit: -strict's stop, the SPRT, and
// (outside fastchessBoard) the report every -ratinginterval.
func (r *matchRun) unitHook() func(*match.UnitResult, *match.Standings) bool {
	rep, inv := r.rep, r.inv
	var seq *sprt.Sequential
	if r.plan.SPRT != nil {
		seq, _ = sprt.NewSequential(*r.plan.SPRT, 1)
	}
	decided := sprt.Continue
	return func(u *match.UnitResult, st *match.Standings) bool {
		if r.strictStopped() != "" {
			return true
		}
		if rep.board != nil {
			// fastchess's SPRT: decided game by game (fastchessBoard).
			return rep.sprtDone()
		}
		if seq != nil {
			if s, err := seq.Update(rep.results(st)); err == nil {
				decided = s.State
			}
		}
		n := r.progress(st)
		if decided != sprt.Continue {
			verdict := "H0"
			if decided == sprt.Accepted {
				verdict = "H1"
			}
			if inv.Output == "cutechess" {
				rep.mu.Lock()
				rep.score()
				rep.mu.Unlock()
			} else {
				rep.line(fmt.Sprintf("SPRT ([%.2f, %.2f]) completed - %s was accepted", r.plan.SPRT.Elo0, r.plan.SPRT.Elo1, verdict))
			}
			rep.interval(st)
			rep.printed = n
			return true
		}
		if ri := inv.RatingInterval; ri > 0 && n/ri != rep.printed/ri {
			rep.interval(st)
			rep.printed = n
		}
		return false
	}
}

// finish prints the match's last lines, or says why it did not end.
func (r *matchRun) finish(st *match.Standings, out io.Writer) error {
	rep, inv := r.rep, r.inv
	if reason := r.strictStopped(); reason != "" {
		return fmt.Errorf("-strict: stopped at the first incident: %s", reason)
	}
	if r.epd != nil && r.epd.err != nil {
		return fmt.Errorf("-epdout %s: %v", inv.EPDOut, r.epd.err)
	}
	if rep.board == nil && st.Status == match.StatusComplete && rep.printed != r.progress(st) {
		rep.interval(st)
	}
	if rep.crc != nil {
		rep.crc.finish(out, r.flags.PGNOut)
	}
	switch st.Status {
	case match.StatusInterrupted:
		return fmt.Errorf("match interrupted after %d games%s", st.Games, resumeHint(r.stateFile))
	case match.StatusFailed:
		return fmt.Errorf("match stopped: %s (give -recover to restart a failed engine and go on)%s", st.Failure, resumeHint(r.stateFile))
	}
	rep.line("Finished match")
	e := st.Elapsed.Round(time.Second)
	rep.line(fmt.Sprintf("Total Time: %02d:%02d:%02d (hours:minutes:seconds)", int(e.Hours()), int(e.Minutes())%60, int(e.Seconds())%60))
	if inv.Dialect == Fastchess {
		rep.line("") // fastchess ends with an empty line
	}
	return nil
}

func resumeHint(stateFile string) string {
	if stateFile == "" {
		return ""
	}
	return "; resume with -config file=" + stateFile
}

func fileCRC32(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, bufio.NewReader(f)); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// epdWriter appends each finished game's final position as an EPD line
// (fastchess's -epdout), from the slots' goroutines.
type epdWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (e *epdWriter) write(g *match.GameRecord) {
	pos := engine.StartPosition()
	if g.StartFEN != "" {
		p, err := engine.ParseFEN(g.StartFEN)
		if err != nil {
			return
		}
		pos = p
	}
	if g.Chess960 {
		pos.SetChess960(true)
	}
	for _, m := range g.Moves {
		pos.MakeMove(m)
	}
	line := epdOf(pos.FEN()) + "\n"
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		_, e.err = io.WriteString(e.w, line)
	}
}

// epdOf is a FEN as fastchess's EPD line: the first four fields, then
// the move counters as the hmvc and fmvn operations.
func epdOf(fen string) string {
	f := strings.Fields(fen)
	if len(f) < 6 {
		return fen
	}
	return strings.Join(f[:4], " ") + " hmvc " + f[4] + "; fmvn " + f[5] + ";"
}
