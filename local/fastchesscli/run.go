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
	if inv.Version {
		if inv.Dialect == Fastchess {
			printVersion(o.Stdout, o.Version)
			return nil
		}
		fmt.Fprintf(o.Stdout, "arbiter %s (fastchess and cutechess-cli command lines)\n", o.Version)
		return nil
	}
	if inv.Help {
		fmt.Fprintln(o.Stdout, "arbiter match in fastchess/cutechess-cli mode: the options of fastchess 1.8 and cutechess-cli; see docs/match.md, \"Drop-in for fastchess and cutechess-cli\"")
		return nil
	}
	flags := inv.Flags
	var resume *match.State
	stateFile := ""
	if inv.AutosaveInterval > 0 {
		stateFile = inv.StateFile
	}
	if inv.Resume != "" {
		// -config file=: a state this mode saved (resume it), or a
		// fastchess-style config.json (play it).
		b, err := os.ReadFile(inv.Resume)
		if err != nil {
			return usage("-config file=%s: %v", inv.Resume, err)
		}
		var probe struct {
			Format     string          `json:"format"`
			ConfigName json.RawMessage `json:"config_name"`
		}
		json.Unmarshal(b, &probe)
		var c *matchplan.Config
		if probe.ConfigName != nil {
			return usage("-config file=%s: a config.json that fastchess wrote: its saved games and settings cannot be resumed by arbiter; start the match again with its command line", inv.Resume)
		}
		if probe.Format != "" {
			st, err := match.LoadState(inv.Resume)
			if err != nil {
				return usage("-config file=%s: %v", inv.Resume, err)
			}
			if st.Status == match.StatusComplete || st.Status == match.StatusStopped {
				return usage("-config file=%s: the match is %s (%d games): nothing to play", inv.Resume, st.Status, st.GamesDone)
			}
			if c, err = matchplan.ParseConfig(st.Config, "-config file="+inv.Resume); err != nil {
				return usage("%v", err)
			}
			resume, stateFile = st, inv.Resume
		} else if c, err = matchplan.ParseConfig(b, "-config file="+inv.Resume); err != nil {
			return usage("%v", err)
		}
		if flags, err = c.Flags(flags); err != nil {
			return usage("-config file=%s: %v", inv.Resume, err)
		}
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
	var engineOpts *engineOptions
	if inv.Dialect == Fastchess {
		// As fastchess: an option the engine cannot take is a warning
		// with every game, not a refusal.
		engineOpts = newEngineOptions(len(plan.Engines))
	}
	for i := range plan.Engines {
		if engineOpts != nil {
			plan.Engines[i].ChooseOptions = engineOpts.chooser(i)
		}
		if inv.StartupTimeout > 0 {
			plan.Engines[i].StartTimeout = inv.StartupTimeout
		}
		if inv.ReadyTimeout > 0 {
			plan.Engines[i].ReadyTimeout = inv.ReadyTimeout
		}
	}
	cfg := plan.Config
	if inv.Site != "" {
		cfg.PGNOptions.Site = inv.Site
	}
	cfg.PGNOptions.Nodes, cfg.PGNOptions.SelDepth, cfg.PGNOptions.TimeLeft = inv.PGNNodes, inv.PGNSelDepth, inv.PGNTimeLeft
	if resume == nil && flags.PGNOut != "" && !inv.PGNAppend {
		if err := os.WriteFile(flags.PGNOut, nil, 0o644); err != nil {
			return fmt.Errorf("-pgnout: %v", err)
		}
	}

	out := o.Stdout
	if inv.LogFile != "" {
		lf, err := os.OpenFile(inv.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return usage("-log file=%s: %v", inv.LogFile, err)
		}
		defer lf.Close()
		out = io.MultiWriter(out, lf)
	}
	var epd *epdWriter
	if inv.EPDOut != "" {
		mode := os.O_CREATE | os.O_WRONLY | os.O_APPEND
		if !inv.EPDAppend && resume == nil {
			mode |= os.O_TRUNC
		}
		ef, err := os.OpenFile(inv.EPDOut, mode, 0o644)
		if err != nil {
			return usage("-epdout: %v", err)
		}
		defer ef.Close()
		epd = &epdWriter{w: ef}
	}

	stateConfig, err := json.Marshal(matchplan.ConfigOf(plan))
	if err != nil {
		return err
	}
	rep := &reporter{out: out, inv: inv, total: plan.Schedule.Len(), sprt: plan.SPRT, options: engineOpts}
	t := &match.Tournament{
		Engines: plan.Engines, Schedule: plan.Schedule, Limits: cfg.Limits, Game: cfg.Game,
		Openings: cfg.Openings, Concurrency: cfg.Concurrency, Recover: flags.Recover,
		// As fastchess: games lost to crashes are played and counted (the
		// farms judge them), not a reason to stop.
		PlayAbandoned: true,
		PGNFile:       flags.PGNOut, PGNOptions: cfg.PGNOptions,
		StateFile: stateFile, StateConfig: stateConfig, Resume: resume,
		Builtin: o.Builtin,
	}
	if t.PGNFile == "" {
		t.PGN = io.Discard
	}
	var seq *sprt.Sequential
	if plan.SPRT != nil {
		seq, _ = sprt.NewSequential(*plan.SPRT, 1)
	}
	paired := plan.Schedule.Paired() && inv.Penta
	if inv.Output == "fastchess" && len(plan.Engines) == 2 {
		rep.board = &fastchessBoard{penta: paired, interval: inv.RatingInterval, total: plan.Schedule.Len(), firstOfPair: map[int]fastchessStats{}}
	}
	progress := func(st *match.Standings) int {
		if paired {
			return st.Games / 2
		}
		return st.Games
	}
	t.OnStart = func(st *match.Standings) {
		rep.names = st.Engines
		book := plan.BookName
		if len(st.Engines) >= 2 {
			rep.details = details(plan.Engines, cfg.Limits, book, engineOpts)
		}
		rep.printed = progress(st)
		if rep.board != nil && resume != nil {
			rep.board.seed(rep.results(st), st.Games)
		}
		if inv.CRC32 && flags.PGNOut != "" {
			rep.crc = newPGNCRC(pgnName, flags.PGNOut, cfg.PGNOptions)
		}
		if resume != nil {
			rep.line(fmt.Sprintf("Resuming after %d games from %s", st.Games, stateFile))
		}
	}
	var strictMu sync.Mutex
	strictFailure := ""
	t.OnGameStart = func(i int, white, black string) {
		warnings := rep.started(i, white, black)
		if inv.Strict && len(warnings) > 0 {
			// fastchess -strict stops at its first warning line.
			strictMu.Lock()
			if strictFailure == "" {
				strictFailure = fmt.Sprintf("game %d: %s", i+1, warnings[0])
			}
			strictMu.Unlock()
		}
	}
	t.OnGameEnd = func(i int, g *match.GameRecord) {
		rep.ended(i, g)
		if inv.Strict {
			for _, inc := range g.Incidents {
				if inc.Kind != match.IncOverrun && inc.Kind != match.IncRestart {
					strictMu.Lock()
					if strictFailure == "" {
						strictFailure = fmt.Sprintf("game %d: %s", i+1, inc)
					}
					strictMu.Unlock()
				}
			}
		}
		if epd != nil {
			epd.write(g)
		}
		if inv.Wait > 0 {
			// Called by the slot that played the game: its next game
			// waits, the others do not.
			select {
			case <-time.After(inv.Wait):
			case <-ctx.Done():
			}
		}
	}
	decided := sprt.Continue
	t.OnUnit = func(u *match.UnitResult, st *match.Standings) bool {
		strictMu.Lock()
		failed := strictFailure != ""
		strictMu.Unlock()
		if failed {
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
		n := progress(st)
		ri := inv.RatingInterval
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
				rep.line(fmt.Sprintf("SPRT ([%.2f, %.2f]) completed - %s was accepted", plan.SPRT.Elo0, plan.SPRT.Elo1, verdict))
			}
			rep.interval(st)
			rep.printed = n
			return true
		}
		if rep.board == nil && ri > 0 && n/ri != rep.printed/ri {
			rep.interval(st)
			rep.printed = n
		}
		return false
	}
	st, err := t.Run(ctx)
	if err != nil {
		if st == nil {
			return usage("%v", err)
		}
		return err
	}
	if strictFailure != "" {
		return fmt.Errorf("-strict: stopped at the first incident: %s", strictFailure)
	}
	if epd != nil && epd.err != nil {
		return fmt.Errorf("-epdout %s: %v", inv.EPDOut, epd.err)
	}
	if rep.board == nil && st.Status == match.StatusComplete && rep.printed != progress(st) {
		rep.interval(st)
	}
	if rep.crc != nil {
		rep.crc.finish(out, flags.PGNOut)
	}
	switch st.Status {
	case match.StatusInterrupted:
		return fmt.Errorf("match interrupted after %d games%s", st.Games, resumeHint(stateFile))
	case match.StatusFailed:
		return fmt.Errorf("match stopped: %s (give -recover to restart a failed engine and go on)%s", st.Failure, resumeHint(stateFile))
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
